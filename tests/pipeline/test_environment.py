"""The rules' conda environment (``workflow/envs/ddppm.yaml``) is written from the hashed lock: every package at the
lock's version, with its marker, then the checkout; the committed file is what the generator writes."""

from __future__ import annotations

import yaml

from ddppm.pipeline.environment import ENVIRONMENT_PATH, LOCK_PATH, conda_environment, lock_pins, main
from tests.conftest import REPO

LOCK = """absl-py==2.5.1 \\
    --hash=sha256:286e71c82c1a38e75bbcf185f9b37d0305ad7786535107cb49bf4df9ff2e1f95
    # via
    #   dm-tree
colorama==0.4.6 ; sys_platform == 'win32' \\
    --hash=sha256:08695f5cb7ed6e0531a20572697297273c47b8cae5a63ffc6d6ed5c201be6e44
opendp[scikit-learn]==0.16.0 \\
    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000
"""


def test_the_lock_gives_every_pin_with_its_marker_and_no_hash():
    assert lock_pins(LOCK) == ["absl-py==2.5.1", "colorama==0.4.6 ; sys_platform == 'win32'",
                               "opendp[scikit-learn]==0.16.0"]  # fmt: skip


def test_the_environment_pins_python_and_every_package_then_the_checkout():
    env = yaml.safe_load(conda_environment(LOCK))
    assert env["channels"] == ["conda-forge", "nodefaults"]
    python, pip, pip_list = env["dependencies"]
    assert python == "python =3.11" and pip == "pip"
    assert pip_list["pip"] == [*lock_pins(LOCK), "-e ../.."]


def test_the_committed_environment_is_the_locks():
    lock = (REPO / LOCK_PATH).read_text(encoding="utf-8")
    assert (REPO / ENVIRONMENT_PATH).read_text(encoding="utf-8") == conda_environment(lock), (
        f"{ENVIRONMENT_PATH} differs from {LOCK_PATH}: run `python -m ddppm.pipeline.environment` and commit it"
    )
    # every requirement of the lock is pinned, none is dropped by the parser
    requirements = [line for line in lock.splitlines() if line[:1].isalpha()]
    assert len(lock_pins(lock)) == len(requirements) > 50


def test_main_writes_the_environment(tmp_path, capsys):
    (tmp_path / "lock").write_text(LOCK)
    assert main(["--lock", str(tmp_path / "lock"), "--out", str(tmp_path / "env.yaml")]) == 0
    assert (tmp_path / "env.yaml").read_text() == conda_environment(LOCK)
    assert "wrote" in capsys.readouterr().out
