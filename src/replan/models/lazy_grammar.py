"""Greedy grammar-constrained decoding that checks the grammar on the greedy pick first.

llama-cpp-python's sampler chain runs the grammar over the whole vocabulary (49,152 tokens for
SmolLM2) at every token before it takes the best one. Under greedy decoding the best allowed
token is the best token whenever the grammar allows it, so it is enough to ask the grammar about
that one token, and to mask the whole vocabulary only when it is refused (llama.cpp's own
``common_sampler`` does the same). The text is the same token for token; only the time differs
(on SmolLM2's C1 plans, 47 against 37 tokens/s, with 10% of tokens refused and resampled:
``benchmarks/bench_lazy_grammar.py``).

:func:`install` replaces the sampler of one loaded ``llama_cpp.Llama`` for greedy requests with a
grammar (``temperature=0``, no logits processors); every other request keeps the library's own.
"""

from __future__ import annotations

import ctypes
import math
import types
from typing import Any

import numpy as np

#: the layout of ``llama_token_data`` (token id, logit, probability)
_TOKEN_DATA = np.dtype([("id", np.intc), ("logit", np.single), ("p", np.single)], align=True)


class GreedyPickGrammar:
    """A llama.cpp sampler (to sit between the penalties and the greedy pick) that runs
    ``grammar`` on the best candidate alone, and on all of them only when it refuses that one.
    ``checked`` and ``refused`` count the tokens of its requests."""

    def __init__(self, llama_cpp: Any, vocab: Any, grammar: Any):
        self._lib = llama_cpp
        self.grammar = llama_cpp.llama_sampler_init_grammar(
            vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self.grammar:
            raise ValueError("llama.cpp refused the grammar")
        self.checked = 0
        self.refused = 0
        self._one = llama_cpp.llama_token_data()
        self._one_array = llama_cpp.llama_token_data_array(
            data=ctypes.pointer(self._one), size=1, selected=-1, sorted=False
        )
        # the callbacks stay referenced as long as llama.cpp may call them
        self._callbacks = (
            llama_cpp.llama_sampler_i_apply(self._apply),
            llama_cpp.llama_sampler_i_accept(self._accept),
            llama_cpp.llama_sampler_i_free(lambda _s: None),  # the chain must not free us
        )
        iface = llama_cpp.llama_sampler_i()
        iface.apply, iface.accept, iface.free = self._callbacks
        iface.name = llama_cpp.llama_sampler_i_name(0)
        iface.reset = llama_cpp.llama_sampler_i_reset(0)
        iface.clone = llama_cpp.llama_sampler_i_clone(0)
        self._iface = iface
        self.sampler = llama_cpp.llama_sampler()
        self.sampler.iface = ctypes.pointer(iface)
        self.sampler.ctx = None

    def _apply(self, _sampler: Any, candidates: Any) -> None:
        try:
            self._apply_to_best(candidates)
        except Exception:  # ctypes would swallow it and the token go unchecked: check them all
            self._lib.llama_sampler_apply(self.grammar, candidates)

    def _apply_to_best(self, candidates: Any) -> None:
        arr = candidates.contents
        data = (self._lib.llama_token_data * arr.size).from_address(
            ctypes.addressof(arr.data.contents)
        )
        view = np.frombuffer(data, dtype=_TOKEN_DATA)
        best = int(np.argmax(view["logit"]))  # the first of equal maxima, as the greedy pick
        self._one.id = int(view["id"][best])
        self._one.logit = float(view["logit"][best])
        self._one.p = 0.0
        self._one_array.size = 1
        self._one_array.selected = -1
        self._lib.llama_sampler_apply(self.grammar, ctypes.byref(self._one_array))
        self.checked += 1
        if self._one.logit == -math.inf:  # refused: mask the whole vocabulary, pick again
            self.refused += 1
            self._lib.llama_sampler_apply(self.grammar, candidates)

    def _accept(self, _sampler: Any, token: int) -> None:
        self._lib.llama_sampler_accept(self.grammar, token)

    def __del__(self) -> None:
        grammar, self.grammar = getattr(self, "grammar", None), None
        if grammar:
            self._lib.llama_sampler_free(grammar)


def install(llm: Any) -> list[GreedyPickGrammar]:
    """Make ``llm`` (a ``llama_cpp.Llama``) check the grammar of greedy requests on the greedy
    pick first; returns the list its grammar samplers are appended to, one per request (their
    counts show the path was taken)."""
    import llama_cpp
    from llama_cpp import _internals

    made: list[GreedyPickGrammar] = []
    stock = type(llm)._init_sampler

    def init_sampler(self: Any, **kw: Any) -> Any:
        grammar = kw.get("grammar")
        if grammar is None or kw.get("temp") != 0.0 or kw.get("logits_processor"):
            return stock(self, **kw)
        chain = _internals.LlamaSampler()
        chain.add_penalties(  # as the library's chain: penalties, grammar, greedy pick
            n_vocab=self._n_vocab,
            penalty_last_n=self.last_n_tokens_size,
            penalty_repeat=kw.get("repeat_penalty", 1.0),
            penalty_freq=kw.get("frequency_penalty", 0.0),
            penalty_present=kw.get("presence_penalty", 0.0),
        )
        lazy = GreedyPickGrammar(llama_cpp, self._model.vocab, grammar)
        llama_cpp.llama_sampler_chain_add(chain.sampler, ctypes.pointer(lazy.sampler))
        # removed from the chain before it is freed, and kept alive as long as the chain
        chain.custom_samplers.append((llama_cpp.llama_sampler_chain_n(chain.sampler) - 1, lazy))
        chain.add_greedy()
        made.append(lazy)
        del made[:-8]  # the last few requests' counts, not every request's
        return chain

    llm._init_sampler = types.MethodType(init_sampler, llm)
    return made


__all__ = ["GreedyPickGrammar", "install"]
