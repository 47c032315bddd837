"""`pip install ./clients/python` into a fresh virtual env works, installs the distribution
`hindsight-memory` with the one import package `hindsight_memory`, and the installed package (not the
source tree) talks to the stack. Offline and fast: `--no-deps --no-build-isolation`, with the shared
env's site-packages on the new env's path for httpx, pydantic and setuptools (only as a path: its
`.pth` files, among them the editable install of this client, are not run)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from hindsight_memory import Hindsight

from tests.client.conftest import new_bank
from tests.conftest import ADMIN_KEY, ROOT

PROGRAM = """
from importlib.metadata import distribution

import hindsight_memory
from hindsight_memory import Hindsight
print(hindsight_memory.__file__)
dist = distribution("hindsight-memory")
print(dist.locate_file(""))
# What the wheel put in site-packages, bar its metadata: the one import package.
print(",".join(sorted({f.parts[0] for f in dist.files or [] if not f.parts[0].endswith(".dist-info")})))
with Hindsight() as hs:
    print(",".join(sorted(b.bank_id for b in hs.banks.list())))
"""


def test_pip_install_into_a_fresh_env(hs: Hindsight, service: str, tmp_path: Path) -> None:
    bank_id = new_bank(hs)
    # A copy of the sources: the build writes into the tree it builds (build/, *.egg-info).
    source = tmp_path / "hindsight-memory"
    shutil.copytree(
        ROOT / "clients" / "python",
        source,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"),
    )
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    own = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(own) / "shared-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(source),
        ],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    env = {**os.environ, "HINDSIGHT_URL": service, "HINDSIGHT_API_KEY": ADMIN_KEY}
    env.pop("PYTHONPATH", None)
    run = subprocess.run(
        [python, "-c", PROGRAM], check=True, capture_output=True, text=True, cwd=tmp_path, env=env
    )
    location, site, packages, banks = run.stdout.strip().splitlines()
    assert Path(location).is_relative_to(env_dir)
    assert Path(site).is_relative_to(env_dir)  # the fresh env's distribution, not the shared env's
    assert packages == "hindsight_memory"
    assert Path(location).with_name("py.typed").exists()
    assert bank_id in banks.split(",")
