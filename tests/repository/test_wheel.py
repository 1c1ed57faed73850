"""The installable package: the built wheel, installed into a fresh virtual environment outside the repository, gives
``import ddppm``, ``ddppm advise``, ``ddppm fit`` and ``ddppm.PrivatePCA``, and reads nothing from the checkout.

The wheel is built from a copy of the checkout (setuptools writes ``build/`` beside the sources) with the locked
build backend (``--no-build-isolation``, as ``requirements/install.sh`` installs). It is installed with ``--no-deps``
into a new environment whose dependencies come from the locked environment through a ``.pth`` line (its directory
is appended to ``sys.path``; the editable install's finder there is not activated, since ``.pth`` files of an
appended directory are not read), so no network is needed; the wheel's declared dependencies are checked against
those installed versions instead.
"""

from __future__ import annotations

import json
import site
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.conftest import copy_repo

pytestmark = pytest.mark.slow


def _run(args: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    out = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"{' '.join(map(str, args))}:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, Path]:
    """A fresh environment with the wheel and nothing of the checkout; returns its python, ddppm and a work folder."""
    root = tmp_path_factory.mktemp("wheel")
    source = copy_repo(root / "checkout")
    dist = root / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", dist, source], root)
    (wheel,) = dist.glob("ddppm-*.whl")
    env = root / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", env], root)
    python = env / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-compile", wheel], root)
    paths = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(_run([python, "-c", paths], root).stdout.strip())
    (purelib / "_locked_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    work = root / "elsewhere"
    work.mkdir()
    ddppm = env / "bin" / "ddppm"  # the console script pip wrote from the wheel's entry point
    return {"python": python, "ddppm": ddppm, "wheel": wheel, "purelib": purelib, "work": work, "checkout": source}


def test_the_wheel_imports_from_its_own_install_and_carries_its_data(installed) -> None:
    probe = (
        "import json, ddppm, ddppm.release.estimator as e, ddppm.core.provenance as p;"
        "print(json.dumps({'file': ddppm.__file__, 'estimator': e.__file__, 'package': str(p.PACKAGE_DIR)}))"
    )
    where = json.loads(_run([installed["python"], "-c", probe], installed["work"]).stdout)
    for path in where.values():
        assert Path(path).resolve().is_relative_to(installed["purelib"].resolve()), where
    with zipfile.ZipFile(installed["wheel"]) as wheel:
        names = wheel.namelist()
    yaml_in_source = {
        p.relative_to(installed["checkout"] / "src").as_posix()
        for p in (installed["checkout"] / "src" / "ddppm").rglob("*.yaml")
    }
    assert yaml_in_source and yaml_in_source <= set(names), sorted(yaml_in_source - set(names))


def test_the_wheel_declares_what_the_lock_installs(installed) -> None:
    from importlib.metadata import version

    with zipfile.ZipFile(installed["wheel"]) as wheel:
        metadata = Parser().parsestr(
            wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        )
    required = [Requirement(r) for r in metadata.get_all("Requires-Dist") or [] if "extra ==" not in r]
    assert required, "the wheel declares no dependency"
    unmet = [str(r) for r in required if not r.specifier.contains(version(r.name), prereleases=True)]
    assert not unmet, f"the locked environment does not satisfy the wheel's dependencies: {unmet}"
    with zipfile.ZipFile(installed["wheel"]) as wheel:
        entry_points = next(n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt"))
        assert "ddppm = ddppm.cli:main" in wheel.read(entry_points).decode()


def test_advise_fit_and_the_estimator_run_from_the_wheel(installed) -> None:
    python, work = installed["python"], installed["work"]
    advice = _run(
        [installed["ddppm"], "advise", "--n", "2000", "--d", "5", "--m", "10", "--eps", "2", "--delta", "1e-6",
         "--trust", "central", "--runs", "2", "--prepared-rows"],
        work,
    ).stdout  # fmt: skip
    assert "Which method, for users who trust central at ε = 2" in advice and "AnalyzeGauss" in advice, advice[-1500:]

    rng_code = (
        "import numpy as np, yaml;"
        "rng = np.random.default_rng(0);"
        "X = rng.uniform(0, 10, size=(400, 4));"
        "np.savetxt('rows.csv', X, delimiter=',', header='a,b,c,d', comments='');"
        "yaml.safe_dump({'kind': 'declared', 'source': 'units: every feature lies in 0-10 by design',"
        " 'features': [[0, 10]] * 4}, open('bounds.yaml', 'w'))"
    )
    _run([python, "-c", rng_code], work)
    _run(
        [installed["ddppm"], "fit", "rows.csv", "--bounds", "bounds.yaml", "--k", "2", "--eps", "2",
         "--delta", "1e-5", "--method", "analyze_gauss", "--out", "release.json"],
        work,
    )  # fmt: skip
    release = json.loads((work / "release.json").read_text())
    assert "components" in json.dumps(release)

    estimator = (
        "import numpy as np, yaml; from ddppm import PrivatePCA;"
        "X = np.loadtxt('rows.csv', delimiter=',', skiprows=1);"
        "pca = PrivatePCA(2, epsilon=2.0, delta=1e-5, bounds=yaml.safe_load(open('bounds.yaml')),"
        " trust='central', method='analyze_gauss').fit(X);"
        "print(pca.components_.shape, pca.privacy_.delta <= 1e-5)"
    )
    assert _run([python, "-c", estimator], work).stdout.split()[-3:] == ["(2,", "4)", "True"]
    assert not list(work.glob("results*")), "the package wrote a results folder where it was run"
