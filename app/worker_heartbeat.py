"""Worker liveness: each worker refreshes its score in a Redis sorted set; /readyz reads it."""

from __future__ import annotations

import logging
import threading
import time

import redis

log = logging.getLogger(__name__)

HEARTBEAT_KEY = "hindsight:workers"


class Heartbeat:
    def __init__(self, redis_url: str, name: str, interval: float) -> None:
        self._client = redis.Redis.from_url(redis_url, socket_timeout=2, socket_connect_timeout=2)
        self._name = name
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hindsight-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        try:
            self._client.zrem(HEARTBEAT_KEY, self._name)
        except redis.RedisError:
            pass

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._client.zadd(HEARTBEAT_KEY, {self._name: time.time()})
            except redis.RedisError as exc:
                log.warning("heartbeat failed: %s", exc)
            self._stop.wait(self._interval)
