"""Blocking calls for scripts and notebooks: the engine, the bridge and the agent without ``await``.

sagewai is async first. Code that is not async (a script, a notebook cell, a framework's sync
callback) wraps an object once and calls it plainly::

    from sagewai import ContextEngine
    from sagewai.sync import wrap

    with wrap(ContextEngine.local("./memory", project_id="my-app")) as ctx:
        ctx.add("Alice prefers green tea", user_id="alice")
        print(ctx.search("what does Alice drink?", user_id="alice")[0].fact.content)

How it works, and why it is one helper and not a second API:

* Every blocking method is the async method itself, run by one helper
  (:func:`sagewai._background.run_blocking`) on a private event loop in a background thread.
  The loop outlives each call, so what an object leaves running (a bridge's background
  extraction, a connection pool) keeps running between calls, and it works the same inside a
  running loop (Jupyter, IPython, an async framework's sync callback): the caller's loop is
  never re-entered (no ``nest_asyncio``), the call waits for the background loop.
* The wrapper classes are generated from the async classes by one descriptor,
  :class:`_Blocking`: ``search = _Blocking(ContextEngine.search)`` takes the async method's
  parameters (a ``ParamSpec``) and result type, so ``mypy --strict`` checks a call to
  ``SyncContextEngine.search`` against ``ContextEngine.search`` and types its result as
  ``list[SearchResult]``; the docstring is the async method's. Nothing is copied: a parameter
  added to the async method is there in the blocking one.
* An object is built with the ordinary constructors and wired as usual (a bridge over the
  engine, an agent over both); :func:`wrap` then gives each a blocking face. Drive one object
  either through its wrapper or with ``await``, not both: its stores and tasks live on the
  loop that first ran it.

:func:`run` runs any other coroutine of sagewai the same way
(``run(MemoryConsolidator(context_engine=ctx.aio).consolidate())``).

Example:
    >>> from sagewai import ContextEngine
    >>> from sagewai.testing import FakeEmbedder
    >>> with wrap(ContextEngine.in_memory(embedder=FakeEmbedder())) as ctx:
    ...     _ = ctx.add("Alice prefers green tea", user_id="alice")
    ...     [r.fact.content for r in ctx.search("green tea", user_id="alice")]
    ['Alice prefers green tea']
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from sagewai import ContextEngine, UniversalAgent
from sagewai._background import BackgroundLoop, default_loop, run_blocking
from sagewai.context import MemoryBridge
from sagewai.errors import InvalidInputError

__all__ = ["SyncContextEngine", "SyncMemoryBridge", "SyncUniversalAgent", "run", "wrap"]

P = ParamSpec("P")
R = TypeVar("R")
Target = TypeVar("Target")

run = run_blocking
"""Run one coroutine of sagewai to completion from synchronous code (see the module text)."""


class _Facade(Generic[Target]):
    """What every blocking wrapper holds: the async object (``aio``) and the loop it runs on."""

    _closed_by = "close"  # the async method that closes the wrapped object

    def __init__(self, target: Target, *, loop: BackgroundLoop | None = None) -> None:
        self.aio = target
        self.loop = loop or default_loop()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.aio!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        closing: Callable[[], Coroutine[Any, Any, object]] = getattr(self.aio, self._closed_by)
        self.loop.run(closing())


class _Blocking(Generic[Target, P, R]):
    """A blocking method made from an async one: same parameters, same result, same docstring.

    ``_Blocking(ContextEngine.search)`` captures the parameters after ``self`` (``P``) and the
    result (``R``); read on a wrapper it is a plain function of ``P`` returning ``R``, which
    calls the method of that name on the wrapped object (so an override or a later change of
    the async method is what runs) and waits for it on the wrapper's loop.
    """

    def __init__(self, method: Callable[Concatenate[Target, P], Coroutine[Any, Any, R]]) -> None:
        self.method = method
        self.name = method.__name__

    @overload
    def __get__(self, facade: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(self, facade: _Facade[Target], owner: type[Any]) -> Callable[P, R]: ...

    def __get__(self, facade: _Facade[Target] | None, owner: type[Any]) -> Self | Callable[P, R]:
        if facade is None:
            return self
        bound: Callable[P, Coroutine[Any, Any, R]] = getattr(facade.aio, self.name)
        run_on = facade.loop.run

        @functools.wraps(self.method)
        def blocking(*args: P.args, **kwargs: P.kwargs) -> R:
            return run_on(bound(*args, **kwargs))

        return blocking


class SyncContextEngine(_Facade[ContextEngine]):
    """The blocking face of a :class:`~sagewai.ContextEngine` (see :mod:`sagewai.sync`).

    Build it with :meth:`local` / :meth:`in_memory`, or ``wrap(engine)``; the async engine is
    ``.aio`` (hand it to a ``MemoryBridge`` or ``UniversalAgent``). ``with`` closes it.
    """

    @classmethod
    def local(
        cls, path: str | Path, *, project_id: str = "default", **settings: Any
    ) -> SyncContextEngine:
        """``ContextEngine.local(path, project_id=..., **settings)``, blocking."""
        return cls(ContextEngine.local(path, project_id=project_id, **settings))

    @classmethod
    def in_memory(cls, *, project_id: str = "default", **settings: Any) -> SyncContextEngine:
        """``ContextEngine.in_memory(project_id=..., **settings)``, blocking (nothing persists)."""
        return cls(ContextEngine.in_memory(project_id=project_id, **settings))

    open = _Blocking(ContextEngine.open)
    close = _Blocking(ContextEngine.close)
    add = _Blocking(ContextEngine.add)
    add_many = _Blocking(ContextEngine.add_many)
    add_document = _Blocking(ContextEngine.add_document)
    search = _Blocking(ContextEngine.search)
    get = _Blocking(ContextEngine.get)
    list = _Blocking(ContextEngine.list)
    get_all = _Blocking(ContextEngine.get_all)
    count = _Blocking(ContextEngine.count)
    history = _Blocking(ContextEngine.history)
    changes = _Blocking(ContextEngine.changes)
    revert = _Blocking(ContextEngine.revert)
    supersede = _Blocking(ContextEngine.supersede)
    set_status = _Blocking(ContextEngine.set_status)
    delete = _Blocking(ContextEngine.delete)
    forget = _Blocking(ContextEngine.forget)
    migrate = _Blocking(ContextEngine.migrate)


class SyncMemoryBridge(_Facade[MemoryBridge]):
    """The blocking face of a :class:`~sagewai.context.MemoryBridge`; ``with`` closes it."""

    _closed_by = "aclose"

    process_message = _Blocking(MemoryBridge.process_message)
    remember = _Blocking(MemoryBridge.remember)
    submit = _Blocking(MemoryBridge.submit)
    flush = _Blocking(MemoryBridge.flush)
    bridge_conversation = _Blocking(MemoryBridge.bridge_conversation)
    close = _Blocking(MemoryBridge.aclose)


class SyncUniversalAgent(_Facade[UniversalAgent]):
    """The blocking face of a :class:`~sagewai.UniversalAgent`; ``with`` closes it."""

    _closed_by = "aclose"

    chat = _Blocking(UniversalAgent.chat)
    respond = _Blocking(UniversalAgent.respond)
    end_session = _Blocking(UniversalAgent.end_session)
    flush = _Blocking(UniversalAgent.flush)
    forget = _Blocking(UniversalAgent.forget)
    close = _Blocking(UniversalAgent.aclose)


@overload
def wrap(target: ContextEngine, *, loop: BackgroundLoop | None = None) -> SyncContextEngine: ...
@overload
def wrap(target: MemoryBridge, *, loop: BackgroundLoop | None = None) -> SyncMemoryBridge: ...
@overload
def wrap(target: UniversalAgent, *, loop: BackgroundLoop | None = None) -> SyncUniversalAgent: ...
def wrap(
    target: ContextEngine | MemoryBridge | UniversalAgent, *, loop: BackgroundLoop | None = None
) -> SyncContextEngine | SyncMemoryBridge | SyncUniversalAgent:
    """The blocking face of an engine, a bridge or an agent (see :mod:`sagewai.sync`).

    Raises:
        InvalidInputError: ``target`` is none of the three.
    """
    if isinstance(target, ContextEngine):
        return SyncContextEngine(target, loop=loop)
    if isinstance(target, MemoryBridge):
        return SyncMemoryBridge(target, loop=loop)
    if isinstance(target, UniversalAgent):
        return SyncUniversalAgent(target, loop=loop)
    raise InvalidInputError(
        f"wrap() takes a ContextEngine, a MemoryBridge or a UniversalAgent, not "
        f"{type(target).__name__}"
    )
