"""The public methods are written once, for the sync and the async client alike: a resource names plan
methods (see `_plans`; those of `_operations.Operations`, or of a session's core) as `operation` (one
result) or `listing` (every item of a paginated list); a plan method that takes `**keywords` marks
`self` positional-only (`self, /`), so no keyword can stand for it. Read from a resource of a sync
client, a method runs its plan and returns the result (a listing: an iterator); from an async
client's, it returns a coroutine (a listing: an async iterator). The drivers here are the only code
that knows which."""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from types import TracebackType
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

import httpx

from hindsight_memory._operations import Operations
from hindsight_memory._plans import PageFn, Plan, Target, iterate_async, iterate_sync, run_async, run_sync

P = ParamSpec("P")
T = TypeVar("T")


class _Mode:
    """Which client a resource belongs to (a type parameter only)."""


class Sync(_Mode):
    """The mode of `Hindsight`: a method returns its result."""


class Async(_Mode):
    """The mode of `AsyncHindsight`: a method returns a coroutine, a listing an async iterator."""


Mode = TypeVar("Mode", bound=_Mode)


class Driver(Generic[Mode]):
    """Runs plans on one kind of I/O; `bind` / `bind_pages` turn a plan method into a public one."""

    def __init__(self, target: Target, max_retries: int) -> None:
        self.target = target
        self.ops = Operations(max_retries)

    def bind(self, method: Callable[P, Plan[T]]) -> Callable[P, Any]:
        raise NotImplementedError

    def iterate(self, pages: PageFn[T]) -> Any:
        raise NotImplementedError

    def bind_pages(self, method: Callable[P, PageFn[T]]) -> Callable[P, Any]:
        @functools.wraps(method)
        def iterate(*args: P.args, **kwargs: P.kwargs) -> Any:
            return self.iterate(method(*args, **kwargs))

        return iterate


class SyncDriver(Driver[Sync]):
    def __init__(self, http: httpx.Client, target: Target, max_retries: int) -> None:
        super().__init__(target, max_retries)
        self.http = http

    def run(self, plan: Plan[T]) -> T:
        return run_sync(self.http, self.target, plan)

    def bind(self, method: Callable[P, Plan[T]]) -> Callable[P, T]:
        @functools.wraps(method)
        def run(*args: P.args, **kwargs: P.kwargs) -> T:
            return self.run(method(*args, **kwargs))

        return run

    def iterate(self, pages: PageFn[T]) -> Iterator[T]:
        return iterate_sync(self.http, self.target, pages)


class AsyncDriver(Driver[Async]):
    def __init__(self, http: httpx.AsyncClient, target: Target, max_retries: int) -> None:
        super().__init__(target, max_retries)
        self.http = http

    async def run(self, plan: Plan[T]) -> T:
        return await run_async(self.http, self.target, plan)

    def bind(self, method: Callable[P, Plan[T]]) -> Callable[P, Coroutine[Any, Any, T]]:
        @functools.wraps(method)
        async def run(*args: P.args, **kwargs: P.kwargs) -> T:
            return await self.run(method(*args, **kwargs))

        return run

    def iterate(self, pages: PageFn[T]) -> AsyncIterator[T]:
        return iterate_async(self.http, self.target, pages)


class Resource(Generic[Mode]):
    """A group of public methods (`hs.banks`, `hs.memories`, …) over one driver; its methods run the
    plans of `plans` (the driver's `Operations` unless given)."""

    def __init__(self, driver: Driver[Mode], plans: object | None = None) -> None:
        self._driver = driver
        self._ops = driver.ops
        self._plans = plans if plans is not None else driver.ops


class Closing:
    """`with x:` closes `x` when the block ends."""

    close: Callable[[], object]

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class AsyncClosing:
    """`async with x:` awaits `x.close()` when the block ends."""

    close: Callable[[], Awaitable[object]]

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


class _Method:
    """A plan method, bound on first read from a resource to the resource's plans and then by its
    driver (and kept on the instance), under the resource's name for it."""

    def __init__(self, plan: Callable[..., Any]) -> None:
        self._plan = plan
        self._name = plan.__name__
        self.__doc__ = plan.__doc__  # help(Hindsight.query) reads the plan method's docstring

    def __set_name__(self, owner: type[Any], name: str) -> None:
        self._name = name
        self._qualname = f"{owner.__qualname__}.{name}"

    def _bind(self, driver: Driver[Any], method: Callable[..., Any]) -> Callable[..., Any]:
        raise NotImplementedError

    def _get(self, obj: Resource[Any] | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        bound = self._bind(obj._driver, self._plan.__get__(obj._plans, type(obj._plans)))
        bound.__name__, bound.__qualname__ = self._name, self._qualname
        # help() and IDEs: the plan method's parameters; its return type is the plan's, not the call's.
        signature = inspect.signature(bound).replace(return_annotation=inspect.Signature.empty)
        bound.__signature__ = signature  # type: ignore[attr-defined]
        obj.__dict__[self._name] = bound
        return bound


class operation(_Method, Generic[P, T]):
    def __init__(self, plan: Callable[Concatenate[Any, P], Plan[T]]) -> None:
        super().__init__(plan)

    def _bind(self, driver: Driver[Any], method: Callable[..., Any]) -> Callable[..., Any]:
        return driver.bind(method)

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> operation[P, T]: ...
    @overload
    def __get__(self, obj: Resource[Sync], owner: type[Any]) -> Callable[P, T]: ...
    @overload
    def __get__(self, obj: Resource[Async], owner: type[Any]) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, obj: Resource[Any] | None, owner: type[Any]) -> Any:
        return self._get(obj, owner)


class listing(_Method, Generic[P, T]):
    def __init__(self, pages: Callable[Concatenate[Any, P], PageFn[T]]) -> None:
        super().__init__(pages)

    def _bind(self, driver: Driver[Any], method: Callable[..., Any]) -> Callable[..., Any]:
        return driver.bind_pages(method)

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> listing[P, T]: ...
    @overload
    def __get__(self, obj: Resource[Sync], owner: type[Any]) -> Callable[P, Iterator[T]]: ...
    @overload
    def __get__(self, obj: Resource[Async], owner: type[Any]) -> Callable[P, AsyncIterator[T]]: ...
    def __get__(self, obj: Resource[Any] | None, owner: type[Any]) -> Any:
        return self._get(obj, owner)
