"""Finding a registry entry by its ``name = "<name>"`` line (ddppm.core.registry), without importing the package."""

from __future__ import annotations

import subprocess
import sys

from ddppm.core.registry import NAME_LINE, entries_naming


def test_the_name_line_is_a_literal_class_attribute() -> None:
    text = (
        'class A:\n    name = "plain"\n'
        'class B:\n    name: ClassVar[str] = "annotated"  # a comment\n'
        'class C:\n    name = f"{x}"\n'
        'name = "module_level"\n'
        'class D:\n    name = searched["threat_model"]\n'
        "class E:\n    label = \"name = 'not_this'\"\n"
    )
    assert NAME_LINE.findall(text) == ["plain", "annotated"]


def test_entries_naming_reads_source_only() -> None:
    """A module's name, a package's name (its files, any depth), several names in one module; no import."""
    code = (
        "import sys\nfrom ddppm.core.registry import entries_naming\n"
        "print(entries_naming('ddppm.methods', 'ldp_analytic'), entries_naming('ddppm.methods', 'ppm_prior'), "
        "entries_naming('ddppm.experiments', 'studies'), entries_naming('ddppm.methods', 'no_such_method'))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('ddppm.methods.', 'ddppm.experiments.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "('ddppm.methods.ldp',) ('ddppm.methods.ppm',) ('ddppm.experiments.studies',) ()"
    assert out[1] == "[]"
    assert entries_naming("ddppm.methods", "ldp") == ("ddppm.methods.ldp",)
