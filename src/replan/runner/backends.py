"""Building the backend a run's options ask for: this process, local worker processes or Ray."""

from __future__ import annotations

from replan.runner.experiment import Backend, LocalBackend, RunConfig


def make_backend(cfg: RunConfig) -> Backend:
    """The backend ``cfg`` asks for: this process (``workers`` 1), local worker processes
    (``workers`` other than 1; 0: one per core) or a Ray cluster (``backend="ray"``)."""
    if cfg.backend == "ray":
        if cfg.workers != 1:
            raise ValueError(
                f"workers={cfg.workers} is for the local backend; Ray places the work itself "
                "(drop --workers)"
            )
        from replan.runner.ray_backend import RayBackend

        return RayBackend(address=cfg.address)
    if cfg.workers != 1:
        from replan.runner.process_backend import ProcessBackend

        return ProcessBackend(cfg.workers)
    return LocalBackend()


__all__ = ["make_backend"]
