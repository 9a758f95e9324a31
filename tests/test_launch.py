"""kit.launch: what each launcher starts for N processes, and what it refuses (pure: nothing is started)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from kit import launch
from kit.errors import UsageError

COMMAND = ["/envs/jax/bin/python", "train.py", "--epochs", "3"]


def test_local_starts_n_copies_each_with_its_rank_and_one_coordinator_on_the_loopback() -> None:
    started = launch.named("local").launch(launch.LaunchSpec(4, 2), COMMAND,
                                           {"XLA_FLAGS": f"--xla_dump_to=/tmp/d/rank-{launch.RANK}", "HOME": "/h"},
                                           "/work")
    assert started.commands == (tuple(COMMAND),) * 4
    coordinators = {env[launch.COORDINATOR_ENV] for env in started.envs}
    assert len(coordinators) == 1 and next(iter(coordinators)).startswith("127.0.0.1:")
    assert [env[launch.PROCESS_ID_ENV] for env in started.envs] == ["0", "1", "2", "3"]
    assert {env[launch.PROCESSES_ENV] for env in started.envs} == {"4"}
    # Each rank's own dump folder, and what it was given kept.
    assert [env["XLA_FLAGS"] for env in started.envs] == [f"--xla_dump_to=/tmp/d/rank-{r}" for r in range(4)]
    assert {env["HOME"] for env in started.envs} == {"/h"}
    assert {env[launch.LAUNCHER_ENV] for env in started.envs} == {"local"}
    assert started.prefixes == ("[p0] ", "[p1] ", "[p2] ", "[p3] ")
    assert "4 local processes, coordinator 127.0.0.1:" in started.how


def test_two_local_launches_get_different_free_ports() -> None:
    ports = {launch.named("local").launch(launch.LaunchSpec(2), COMMAND, {}, "/").envs[0][launch.COORDINATOR_ENV]
             for _ in range(3)}
    assert len(ports) > 1  # a fixed port would collide between two runs at once


def test_srun_is_one_step_of_n_labelled_tasks_that_slurm_places(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIT_SRUN_ARGS", "--ntasks-per-node=1 --partition 'gpu nodes'")
    monkeypatch.setenv("SLURM_JOB_ID", "77")
    started = launch.named("srun").launch(launch.LaunchSpec(2), COMMAND, {"XLA_FLAGS": "x"}, "/work")
    assert started.commands == (("srun", "--ntasks=2", "--kill-on-bad-exit=1", "--cpu-bind=none", "--label",
                                 "--ntasks-per-node=1", "--partition", "gpu nodes", *COMMAND),)
    # SLURM's own variables tell JAX the coordinator, count and rank: the kit sets none of them.
    assert launch.PROCESS_ID_ENV not in started.envs[0] and launch.COORDINATOR_ENV not in started.envs[0]
    assert started.envs[0][launch.LAUNCHER_ENV] == "srun"
    assert started.how == "2 SLURM tasks started by srun, a step of SLURM job 77"


def test_srun_is_refused_where_this_machine_is_no_slurm_client(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UsageError, match="srun is not on PATH here"):
        launch.checked("srun", launch.LaunchSpec(2))


def test_ssh_spreads_the_ranks_over_the_hosts_and_sends_only_what_the_kit_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KIT_SSH_PORT", "45678")
    monkeypatch.setenv("SECRET_OF_THIS_SESSION", "kept here")
    env = {"SECRET_OF_THIS_SESSION": "kept here", "XLA_FLAGS": "--xla_dump_to=/shared/d/rank-{rank}",
           "EVIL": "$(touch /tmp/owned)"}
    started = launch.checked("ssh", launch.LaunchSpec(4, 2, ("node1", "node2"))).launch(
        launch.LaunchSpec(4, 2, ("node1", "node2")), COMMAND, env, "/shared/project dir")
    hosts = [command[command.index("--") + 1] for command in started.commands]
    assert hosts == ["node1", "node1", "node2", "node2"]
    # "--" before the host: a host word is never read as an option; a host that never answers ends in 20 s.
    assert all(command[:8] == ("ssh", "-tt", "-o", "BatchMode=yes", "-o", "ConnectTimeout=20", "--",
                               command[7]) for command in started.commands)
    remote = shlex.split(started.commands[3][8])
    assert remote[:4] == ["cd", "/shared/project dir", "&&", "exec"]
    sent = dict(word.split("=", 1) for word in remote[5:remote.index(COMMAND[0])])
    assert sent[launch.PROCESS_ID_ENV] == "3" and sent[launch.COORDINATOR_ENV] == "node1:45678"
    assert sent["XLA_FLAGS"] == "--xla_dump_to=/shared/d/rank-3"
    assert sent["EVIL"] == "$(touch /tmp/owned)"  # quoted: a value, never run by the remote shell
    assert "SECRET_OF_THIS_SESSION" not in sent  # the session's own variables stay here
    assert remote[-4:] == COMMAND


@pytest.mark.parametrize("name, spec, said", [
    ("ssh", launch.LaunchSpec(2), "ssh needs the hosts"),
    ("ssh", launch.LaunchSpec(1, None, ("a", "b")), "2 hosts for 1 processes"),
    ("local", launch.LaunchSpec(2, None, ("a",)), "--hosts is for --launcher ssh"),
    ("ssh", launch.LaunchSpec(2, None, ("-oProxyCommand=touch /tmp/owned", "b")), "is not a host name"),
    ("ssh", launch.LaunchSpec(2, None, ("a b", "c")), "'a b' is not a host name"),
    ("ssh", launch.LaunchSpec(2, None, ("node1", "$(id)")), "is not a host name"),
])
def test_a_launcher_refuses_what_it_cannot_start_in_one_sentence(name: str, spec: launch.LaunchSpec,
                                                                  said: str) -> None:
    with pytest.raises(UsageError, match=said):
        launch.checked(name, spec)


def test_an_unknown_launcher_is_refused_with_the_nearest_name() -> None:
    with pytest.raises(UsageError, match="did you mean srun") as caught:
        launch.named("srn")
    assert "local, srun, ssh" in str(caught.value)
    with pytest.raises(UsageError, match="1 or more"):
        launch.LaunchSpec(0)


@pytest.mark.parametrize("host", ["node1", "user@node-2.example.org", "10.0.0.7", "[fe80::1]", "gpu_07"])
def test_a_host_name_or_address_is_taken(host: str) -> None:
    launch.checked("ssh", launch.LaunchSpec(2, None, (host,)))
