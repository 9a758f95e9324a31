"""Warm interpreters of a release (`repro.reduce_worker`): JAX imported once, each candidate run in a fork.

A candidate's run costs what its program costs, not an interpreter start and ``import jax`` (seconds on a
busy machine: measured in docs/reduce.md). Each worker is a child of the kit in a session of its own,
marked as the kit's process tree (`kit.run.child_processes.repro_env`), and ended with its group when
the reduction ends, is stopped, or fails. A worker that dies is started again for the next candidate.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Mapping

from ..errors import KitError
from ..install import Environment, release_bytecode_env
from ..package_files import repro_root
from ..run.child_processes import repro_env
from repro.compile_cache import ENV as COMPILE_CACHE_ENV


@dataclass(frozen=True)
class WorkerEnd:
    """How one candidate's run ended: its exit code (None: killed at the time limit), and its seconds."""

    exit: int | None
    timed_out: bool
    seconds: float


class WorkerFailed(KitError):
    """A release's warm interpreter could not start (JAX itself does not import there)."""


class Worker:
    def __init__(self, env: Environment, scratch: Path, cache: Path | None = None) -> None:
        self.env = env
        self.scratch = scratch
        self.cache = cache
        self.process: subprocess.Popen[str] | None = None
        self.import_s = 0.0

    def start(self) -> None:
        extra = {**self.env.isolating_env(), **release_bytecode_env(self.env)}
        if self.cache is not None:
            self.cache.mkdir(parents=True, exist_ok=True)
            extra[COMPILE_CACHE_ENV] = str(self.cache)
        log = open(self.scratch / f"worker-{os.getpid()}-{id(self)}.log", "w", encoding="utf-8")
        self.process = subprocess.Popen([str(self.env.python), "-m", "repro.reduce_worker"], cwd=repro_root(),
                                        env=repro_env(extra, self.env.pythonpath), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=log, text=True, start_new_session=True)
        log.close()
        said = self._answer()
        if not said.get("ready"):
            self.close()
            raise WorkerFailed(f"jax {self.env.versions.get('jax', '?')} could not import in its environment "
                               f"({said.get('error') or 'the interpreter ended'}): nothing can be reduced there",
                               "run `jax-kit run` on that release to see why, or pick another release")
        self.import_s = float(str(said.get("import_s", 0.0)))

    def _answer(self) -> dict[str, object]:
        assert self.process is not None and self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            return {}
        answer: object = json.loads(line)
        return answer if isinstance(answer, dict) else {}

    def run(self, script: Path, timeout: int, env: Mapping[str, str]) -> WorkerEnd:
        if self.process is None or self.process.poll() is not None:
            self.start()
        assert self.process is not None
        stdin: IO[str] | None = self.process.stdin
        assert stdin is not None
        request = {"script": str(script), "folder": str(script.parent), "timeout": timeout, "env": dict(env)}
        try:
            stdin.write(json.dumps(request) + "\n")
            stdin.flush()
            said = self._answer()
        except (BrokenPipeError, ValueError):
            said = {}
        if "timed_out" not in said:  # the worker itself died: this run is a crash, the next gets a new worker
            self.close()
            return WorkerEnd(-9, False, 0.0)
        code = said.get("exit")
        return WorkerEnd(code if isinstance(code, int) else None, bool(said["timed_out"]),
                     float(str(said.get("seconds", 0.0))))

    def close(self) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self.process = None


class Pool:
    """The warm workers of each release, handed out one run at a time (``jobs`` per release at most)."""

    def __init__(self, envs: Mapping[str, Environment], scratch: Path, jobs: int, cache: bool = False) -> None:
        self._idle: dict[str, list[Worker]] = {release: [] for release in envs}
        self._all: list[Worker] = []
        self._envs = dict(envs)
        self._scratch = scratch
        self._lock = threading.Lock()
        self.jobs = jobs
        self.cache = cache

    def warm(self, release: str) -> float:
        """Start one worker of ``release`` now (so its import is paid before the first candidate); its seconds."""
        worker = self._take(release)
        self._give(release, worker)
        return worker.import_s

    def run(self, release: str, script: Path, timeout: int, env: Mapping[str, str]) -> WorkerEnd:
        worker = self._take(release)
        try:
            return worker.run(script, timeout, env)
        finally:
            self._give(release, worker)

    def _take(self, release: str) -> Worker:
        with self._lock:
            if self._idle[release]:
                return self._idle[release].pop()
            cache = self._scratch / "compile-cache" / release if self.cache else None
            worker = Worker(self._envs[release], self._scratch, cache)
            self._all.append(worker)
        started = time.monotonic()
        worker.start()
        worker.import_s = worker.import_s or time.monotonic() - started
        return worker

    def _give(self, release: str, worker: Worker) -> None:
        with self._lock:
            self._idle[release].append(worker)

    def close(self) -> None:
        for worker in self._all:
            worker.close()
