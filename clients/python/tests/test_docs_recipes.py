"""Runs docs/testing.md's Python recipes (each ```python block after `<!-- recipe: python -->`) as written, with
pytest in a fresh directory, as a team copying them would (the plugin comes from the installed package)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[3] / "docs" / "testing.md"
RECIPE = re.compile(r"^<!-- recipe: python -->\n```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_the_docs_python_recipes_pass(tmp_path):
    if not DOCS.is_file():
        pytest.skip(f"no {DOCS}: these tests are not inside a Parlor checkout")
    recipes = RECIPE.findall(DOCS.read_text(encoding="utf-8"))
    assert len(recipes) >= 2, "docs/testing.md should have the join/leave/drop/resume and the stage-room recipes"
    tests = 0
    for index, recipe in enumerate(recipes):
        (tmp_path / f"test_recipe_{index}.py").write_text(recipe, encoding="utf-8")
        tests += len(re.findall(r"^async def test_", recipe, re.MULTILINE))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                            cwd=tmp_path, env=os.environ.copy(), capture_output=True, text=True, timeout=150)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"the docs' recipes failed:\n{output}"
    assert re.search(rf"\b{tests} passed\b", output), f"expected {tests} passed:\n{output}"
