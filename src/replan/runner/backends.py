"""Building the backend a run's options ask for: this process, local worker processes or Ray."""

from __future__ import annotations

from replan.runner.experiment import Backend, LocalBackend, RunConfig
from replan.runner.preflight import check_workers


def make_backend(cfg: RunConfig) -> Backend:
    """The backend ``cfg`` asks for: this process (``workers`` 1), local worker processes
    (``workers`` other than 1; 0: one per core) or a Ray cluster (``backend="ray"``)."""
    check_workers(cfg.workers, cfg.backend)  # a flag mistake, refused even with nothing to run
    if cfg.backend == "ray":
        from replan.runner.ray_backend import RayBackend

        return RayBackend(address=cfg.address)
    if cfg.workers != 1:
        from replan.runner.process_backend import ProcessBackend

        return ProcessBackend(cfg.workers)
    return LocalBackend()


__all__ = ["make_backend"]
