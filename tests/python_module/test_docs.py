"""The Python examples of the docs run as written: every ```python block of
docs/python.md and of the README, each page's blocks in order in one fresh temporary
folder (a later block may use a file an earlier one wrote)."""
import os
import re

import pytest

from conftest import ROOT

PAGES = [ROOT / "docs" / "python.md", ROOT / "README.md"]


def python_blocks(page):
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.S | re.M)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_python_examples_run(page, tmp_path, monkeypatch, capsys):
    blocks = python_blocks(page)
    if page.name == "python.md":
        assert len(blocks) >= 3, "the guide's examples went missing"
    monkeypatch.chdir(tmp_path)
    for number, code in enumerate(blocks, 1):
        namespace = {"__name__": f"{page.name}_block_{number}"}
        try:
            exec(compile(code, f"{page.name}, python block {number}", "exec"), namespace)
        except Exception as error:  # say which block, with its text
            raise AssertionError(f"{page.name}: python block {number} failed: {error!r}\n{code}") from error
    assert os.getcwd() == str(tmp_path)
