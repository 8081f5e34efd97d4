"""requirements.txt (pip) and environment.yml (conda) must name the same packages at the same versions."""
import re

from conftest import ROOT

# Names that differ between PyPI and conda-forge.
CONDA_NAME = {'psycopg2-binary': 'psycopg2'}


def pip_requirements():
    pins = {}
    for line in (ROOT / 'requirements.txt').read_text().splitlines():
        line = line.split('#')[0].strip()
        if line:
            name, version = line.split('==')
            pins[name.lower()] = version
    return pins


def conda_requirements():
    pins = {}
    for line in (ROOT / 'environment.yml').read_text().splitlines():
        match = re.fullmatch(r'\s+- ([A-Za-z0-9_.\[\]-]+)(==?)([0-9][^\s]*)\s*', line)
        if match:
            pins[match.group(1).lower()] = match.group(3)
    return pins


def test_same_packages_and_versions():
    pip, conda = pip_requirements(), conda_requirements()
    conda.pop('python')
    assert {CONDA_NAME.get(name, name) for name in pip} == {CONDA_NAME.get(name, name) for name in conda}
    for name, version in pip.items():
        assert conda[name] == version, f'{name}: requirements.txt pins {version}, environment.yml {conda[name]}'


def test_python_versions_agree():
    assert re.search(r'- python=3\.11\b', (ROOT / 'environment.yml').read_text())
    assert 'requires-python = ">=3.11"' in (ROOT / 'pyproject.toml').read_text()


def test_reading_a_notebook_does_not_build_a_grammar():
    """jsonschema 4.25+ imports rfc3987-syntax, whose grammar costs 0.7 s of CPU in every process that imports
    nbformat (grading, helpers, servers): requirements.txt pins the jsonschema before it."""
    import subprocess
    import sys
    loaded = subprocess.run([sys.executable, '-c', 'import sys, nbformat, jsonschema; '
                             'nbformat.validate(nbformat.v4.new_notebook()); print(sorted(sys.modules))'],
                            capture_output=True, text=True, check=True).stdout
    assert 'rfc3987_syntax' not in loaded and "'lark'" not in loaded
