"""``[tool.torchdevice-lint]``: discovery, precedence of flags over the file, every key, every error."""

import os
import textwrap
from pathlib import Path

import pytest

from torchdevice_lint.cli import main
from torchdevice_lint.config import (
    DEFAULT_EXCLUDE,
    Config,
    ConfigError,
    find_config,
    isort_lines_after_imports,
    load_config,
    resolve_config,
)
from torchdevice_lint.files import iter_python_files

BUGGY = "import torch\nmodel = Net().cuda()\nx = torch.zeros(3).to('cuda')\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def codes_reported(capsys, *argv):
    code = main(["--output-format", "concise", "-q", *argv])
    out = capsys.readouterr().out
    return code, sorted({line.split(": ")[1].split()[0] for line in out.splitlines()})


@pytest.fixture
def project(tmp_path):
    write(tmp_path / "pyproject.toml", """
        [project]
        name = "demo"

        [tool.torchdevice-lint]
        select = ["TDL00"]
        ignore = ["TDL002"]
    """)
    write(tmp_path / "src" / "train.py", BUGGY)
    return tmp_path


# ------------------------------------------------------------------ discovery
def test_nearest_pyproject_with_the_table_is_found_from_the_first_path(project):
    write(project / "src" / "pyproject.toml", "[project]\nname = 'inner'\n")  # no table: skipped
    assert find_config(str(project / "src" / "train.py")) == project / "pyproject.toml"
    assert find_config(str(project / "src")) == project / "pyproject.toml"
    assert resolve_config([str(project / "src")]).settings().ignore == ("TDL002",)


def test_discovery_starts_at_the_current_folder_for_stdin(project, monkeypatch):
    monkeypatch.chdir(project / "src")
    assert resolve_config(["-"]).path == project / "pyproject.toml"


def test_file_settings_apply(project, capsys):
    assert codes_reported(capsys, str(project / "src")) == (1, ["TDL001"])


def test_flags_override_the_file(project, capsys):
    assert codes_reported(capsys, "--ignore", "TDL001", str(project / "src")) == (1, ["TDL002"])
    assert codes_reported(capsys, "--select", "TDL002", str(project / "src")) == (1, ["TDL002"])


def test_config_flag_picks_a_file_and_isolated_uses_none(project, tmp_path, capsys):
    other = write(tmp_path / "elsewhere" / "pyproject.toml", "[tool.torchdevice-lint]\nselect = ['TDL002']\n")
    assert codes_reported(capsys, "--config", str(other), str(project / "src")) == (1, ["TDL002"])
    assert codes_reported(capsys, "--isolated", str(project / "src")) == (1, ["TDL001", "TDL002"])


def test_config_flag_needs_the_table(tmp_path, capsys):
    path = write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n")
    assert main(["--config", str(path), str(tmp_path)]) == 2
    assert f"{path}: no [tool.torchdevice-lint] table" in capsys.readouterr().err


def test_missing_config_file_is_an_error(tmp_path, capsys):
    assert main(["--config", str(tmp_path / "nope.toml"), str(tmp_path)]) == 2
    assert "nope.toml: cannot read" in capsys.readouterr().err


# --------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "body, message",
    [
        ('devce-style = "cuda"', "unknown key 'devce-style' (did you mean 'device-style'?)"),
        ('device_name = "dev"', "unknown key 'device_name' (did you mean 'device-name'?)"),
        ("colour = 1", "unknown key 'colour'; known keys: select,"),
        ('select = "TDL001"', "select: must be a list of rule codes"),
        ('select = ["E501"]', "select: 'E501' is not a rule code or prefix"),
        ("ignore = [1]", "ignore: must be a list of rule codes"),
        ('device-style = "gpu"', "device-style: must be 'cuda' or 'accelerator', not 'gpu'"),
        ('device-name = "1dev"', "device-name: must be a Python identifier"),
        ('device-name = "class"', "device-name: must be a Python identifier"),
        ('preview = "yes"', "preview: must be true or false, not 'yes'"),
        ("respect-gitignore = 0", "respect-gitignore: must be true or false"),
        ('exclude = "build"', "exclude: must be a list of patterns"),
        ('extend-exclude = [1]', "extend-exclude: must be a list of patterns"),
        ('per-file-ignores = ["tests/*"]', "per-file-ignores: must be a table"),
        ('per-file-ignores = { "tests/*" = ["X1"] }', "per-file-ignores 'tests/*': 'X1' is not a rule code"),
        ("select = [", "invalid TOML"),
    ],
)
def test_bad_keys_and_values_are_one_clear_error(tmp_path, capsys, body, message):
    path = write(tmp_path / "pyproject.toml", f"[tool.torchdevice-lint]\n{body}\n")
    write(tmp_path / "a.py", BUGGY)
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert message in err[0]
    assert str(path) in err[0]
    with pytest.raises(ConfigError):
        load_config(path)


def test_bad_flag_values_are_usage_errors(tmp_path, capsys):
    for argv in (["--select", "X9"], ["--device-style", "gpu"], ["--device-name", "not valid"]):
        with pytest.raises(SystemExit) as exit_:
            main([*argv, str(tmp_path)])
        assert exit_.value.code == 2
    assert "'X9' is not a rule code" in capsys.readouterr().err


# ------------------------------------------------------------------- each key
def test_per_file_ignores_win_over_select(tmp_path, capsys):
    write(tmp_path / "pyproject.toml", """
        [tool.torchdevice-lint]
        select = ["TDL001", "TDL002"]
        per-file-ignores = { "tests/*.py" = ["TDL"], "scripts/" = ["TDL002"] }
    """)
    write(tmp_path / "tests" / "test_a.py", BUGGY)
    write(tmp_path / "scripts" / "deep" / "run.py", BUGGY)
    write(tmp_path / "main.py", BUGGY)
    code, _ = codes_reported(capsys, str(tmp_path))
    assert code == 1
    main(["--output-format", "concise", "-q", str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    assert not any("test_a.py" in line for line in lines)
    assert [line.split(": ")[1].split()[0] for line in lines if "run.py" in line] == ["TDL001"]
    assert sorted(line.split(": ")[1].split()[0] for line in lines if "main.py" in line) == ["TDL001", "TDL002"]


def test_exclude_replaces_and_extend_exclude_adds(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.torchdevice-lint]\nextend-exclude = ["generated/", "*_pb2.py", "/top.py"]\n')
    for name in ("a.py", "top.py", "sub/top.py", "generated/g.py", "x_pb2.py", ".venv/v.py", "build/b.py"):
        write(tmp_path / name, BUGGY)
    config = resolve_config([str(tmp_path)])
    found = {os.path.relpath(p, tmp_path) for p in iter_python_files([str(tmp_path)], config)}
    assert found == {"a.py", os.path.join("sub", "top.py")}

    write(tmp_path / "pyproject.toml", '[tool.torchdevice-lint]\nexclude = ["generated"]\n')
    config = resolve_config([str(tmp_path)])
    found = {os.path.relpath(p, tmp_path) for p in iter_python_files([str(tmp_path)], config)}
    assert ".venv/v.py" in found and "build/b.py" in found and "generated/g.py" not in found


def test_exclude_applies_to_named_files_as_in_flake8(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.torchdevice-lint]\nextend-exclude = ["legacy_*.py"]\n')
    write(tmp_path / "legacy_a.py", BUGGY)
    config = resolve_config([str(tmp_path / "legacy_a.py")])
    assert list(iter_python_files([str(tmp_path / "legacy_a.py")], config)) == []


def test_exclude_flags(tmp_path, capsys):
    write(tmp_path / "a.py", BUGGY)
    write(tmp_path / "gen" / "b.py", BUGGY)
    assert main(["-q", "--isolated", "--extend-exclude", "gen,a.py", str(tmp_path)]) == 0
    capsys.readouterr()


def test_gitignore_is_honoured_by_default(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".gitignore", "ignored/\n*.tmp.py\n!keep.tmp.py\n")
    write(tmp_path / "pkg" / ".gitignore", "local.py\n")
    for name in ("a.py", "ignored/x.py", "b.tmp.py", "keep.tmp.py", "pkg/local.py", "pkg/c.py", "local.py"):
        write(tmp_path / name, BUGGY)
    write(tmp_path / ".git" / "info" / "exclude", "secret.py\n")
    write(tmp_path / "secret.py", BUGGY)
    config = Config(root=tmp_path)
    found = {os.path.relpath(p, tmp_path) for p in iter_python_files([str(tmp_path / "pkg"), str(tmp_path)], config)}
    assert found == {"a.py", "keep.tmp.py", "local.py", os.path.join("pkg", "c.py")}

    off = Config(root=tmp_path, respect_gitignore=False)
    found = {os.path.relpath(p, tmp_path) for p in iter_python_files([str(tmp_path)], off)}
    assert {"b.tmp.py", os.path.join("ignored", "x.py"), "secret.py"} <= found


def test_gitignore_switch_from_file_and_flag(tmp_path, capsys):
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".gitignore", "a.py\n")
    write(tmp_path / "a.py", BUGGY)
    assert main(["-q", str(tmp_path)]) == 0
    assert main(["-q", "--no-respect-gitignore", str(tmp_path)]) == 1
    write(tmp_path / "pyproject.toml", "[tool.torchdevice-lint]\nrespect-gitignore = false\n")
    assert main(["-q", str(tmp_path)]) == 1
    assert main(["-q", "--respect-gitignore", str(tmp_path)]) == 0
    capsys.readouterr()


def test_device_name_and_style_shape_the_fix(tmp_path, capsys):
    write(tmp_path / "pyproject.toml", '[tool.torchdevice-lint]\ndevice-name = "dev"\ndevice-style = "accelerator"\n')
    script = write(tmp_path / "train.py", "import torch\nmodel = Net().cuda()\n")
    assert main(["-q", "--fix", str(script)]) == 1
    fixed = script.read_text()
    # past 88 columns without a configured line length: laid out as Black lays it out
    assert "dev = (\n    torch.accelerator.current_accelerator()\n    if torch.accelerator.is_available()\n" in fixed
    assert "model = Net().to(dev)" in fixed

    script.write_text("import torch\nmodel = Net().cuda()\n")
    assert main(["-q", "--fix", "--device-name", "gpu_or_cpu", "--device-style", "cuda", str(script)]) == 1
    assert 'gpu_or_cpu = torch.device("cuda" if torch.cuda.is_available() else "cpu")' in script.read_text()
    capsys.readouterr()


def test_device_name_falls_back_when_taken():
    from torchdevice_lint import Settings, fix_source

    fixed = fix_source("import torch\ndef dev():\n    pass\nm = M().cuda()\n", settings=Settings(device_name="dev"))
    assert "m = M().to(device)" in fixed


def test_preview_from_file_and_flags(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.torchdevice-lint]\npreview = true\n")
    assert resolve_config([str(tmp_path)]).settings().preview is True
    args = ["--no-preview", str(tmp_path)]
    from torchdevice_lint.cli import build_parser, configure

    assert configure(build_parser().parse_args(args)).settings().preview is False
    assert configure(build_parser().parse_args([str(tmp_path)])).settings().preview is True


def test_defaults_without_any_file(tmp_path):
    config = resolve_config([str(tmp_path)])
    assert config.path is None and config.exclude == DEFAULT_EXCLUDE and config.respect_gitignore
    assert config.settings().select is None and config.settings().device_style == "cuda"


# ------------------------------------------------------- flake8's own config
FLAKE8_DRIVER = """
import sys

import libcst as cst

import torchdevice_lint.settings as engine
from torchdevice_lint.rule import Rule


class PrintCall(Rule):
    '''A preview rule for this test only: flags print().'''

    code = "TDL901"
    name = "print-call"
    message = "print() called"
    needles = ("print",)
    preview = True

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value == "print":
            self.report(node)


engine.ALL_RULES = engine.ALL_RULES + (PrintCall,)
from flake8.main.cli import main
from torchdevice_lint.flake8_plugin import TorchDevicePlugin

try:
    code = main(sys.argv[1:])
finally:
    print("SETTINGS", TorchDevicePlugin.settings, file=sys.stderr)
sys.exit(code)
"""


def flake8(cwd, *argv, driver=False):
    import subprocess
    import sys

    command = [sys.executable, "-c", FLAKE8_DRIVER] if driver else [sys.executable, "-m", "flake8"]
    return subprocess.run([*command, "--jobs", "1", *argv], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_flake8_takes_torchdevice_options_from_setup_cfg(tmp_path):
    write(tmp_path / "train.py", "import torch\nprint('start')\nmodel = Net().cuda()\n")
    write(tmp_path / "setup.cfg", """
        [flake8]
        select = TDL
        torchdevice-preview = true
        torchdevice-device-style = accelerator
        torchdevice-device-name = dev
    """)
    result = flake8(tmp_path, "train.py", driver=True)
    assert result.returncode == 1, result.stderr
    assert [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()] == ["TDL901", "TDL001"]
    assert "preview=True, device_style='accelerator', device_name='dev'" in result.stderr

    write(tmp_path / "setup.cfg", "[flake8]\nselect = TDL\n")  # preview off: the preview rule is quiet
    result = flake8(tmp_path, "train.py", driver=True)
    assert [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()] == ["TDL001"]
    assert "preview=False, device_style='cuda', device_name=None" in result.stderr

    result = flake8(tmp_path, "--torchdevice-preview", "train.py", driver=True)  # the flag works too
    assert [line.split(": ")[1].split()[0] for line in result.stdout.splitlines()] == ["TDL901", "TDL001"]


@pytest.mark.parametrize(
    "line, message",
    [
        ("torchdevice-device-style = gpu", "torchdevice-device-style ([flake8] section or --torchdevice-device-style): "
                                           "must be 'cuda' or 'accelerator', not 'gpu'"),
        ("torchdevice-device-name = 2fast", "torchdevice-device-name ([flake8] section or --torchdevice-device-name): "
                                            "must be a Python identifier"),
    ],
)
def test_flake8_rejects_bad_torchdevice_options_naming_them(tmp_path, line, message):
    write(tmp_path / "train.py", "import torch\nmodel = Net().cuda()\n")
    write(tmp_path / "setup.cfg", f"[flake8]\nselect = TDL\n{line}\n")
    result = flake8(tmp_path, "train.py")
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    assert "TDL001" not in result.stdout


def test_flake8_and_the_cli_agree_under_equivalent_configs(tmp_path):
    import subprocess
    import sys

    write(tmp_path / "pkg" / "train.py", BUGGY)
    write(tmp_path / "tests" / "test_x.py", BUGGY)
    write(tmp_path / "setup.cfg", """
        [flake8]
        select = TDL
        extend-ignore = TDL002
        per-file-ignores = tests/*: TDL001
    """)
    write(tmp_path / "pyproject.toml", """
        [tool.torchdevice-lint]
        ignore = ["TDL002"]
        per-file-ignores = { "tests/*" = ["TDL001"] }
    """)
    flake8_lines = flake8(tmp_path, "pkg", "tests").stdout.splitlines()
    cli = subprocess.run(
        [sys.executable, "-m", "torchdevice_lint.cli", "-q", "--output-format", "concise", "pkg", "tests"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert flake8_lines == [line.replace(" [*]", "") for line in cli.stdout.splitlines()]
    assert flake8_lines == ["pkg/train.py:2:9: TDL001 `.cuda()` hardcodes CUDA and fails without a GPU; use `.to(device)`"]


def test_gitignore_outside_a_repository_covers_the_walked_tree(tmp_path):
    write(tmp_path / ".gitignore", "*.tmp.py\n")
    write(tmp_path / "sub" / "deep" / "x.tmp.py", BUGGY)
    write(tmp_path / "sub" / "deep" / "y.py", BUGGY)
    found = {os.path.relpath(p, tmp_path) for p in iter_python_files([str(tmp_path)], Config(root=tmp_path))}
    assert found == {os.path.join("sub", "deep", "y.py")}


def test_folders_above_the_project_never_match_exclude_patterns(tmp_path, monkeypatch):
    outside = tmp_path / "venv" / "build" / "project"  # default-excluded names above the walked folder
    write(outside / "train.py", BUGGY)
    write(outside / "build" / "gen.py", BUGGY)  # but below it they count
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = resolve_config([str(outside)])
    assert [os.path.relpath(p, outside) for p in iter_python_files([str(outside)], config)] == ["train.py"]
    assert list(iter_python_files([str(outside / "train.py")], config)) == [str(outside / "train.py")]


def test_per_file_ignores_are_explicit_in_one_settings_value(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchdevice-lint]\nselect = ["TDL001"]\ndevice-style = "accelerator"\n'
        'per-file-ignores = {"tests/*" = ["TDL0"]}\n'
    )
    config = resolve_config([str(tmp_path)])
    in_tests = config.settings_for(str(tmp_path / "tests" / "test_x.py"))
    assert in_tests.select == ("TDL001",) and in_tests.file_ignores == ("TDL0",)
    assert in_tests.device_style == "accelerator"
    assert in_tests.enabled_rules() == []
    assert config.settings_for(str(tmp_path / "train.py")) is config.settings()
    assert [rule.code for rule in config.settings().enabled_rules()] == ["TDL001"]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("pyproject.toml", "[tool.ruff.lint.isort]\nlines-after-imports = 2\n", 2),
        ("pyproject.toml", "[tool.ruff.isort]\nlines-after-imports = 2\n", 2),
        ("pyproject.toml", "[tool.isort]\nprofile = 'black'\nlines_after_imports = 2\n", 2),
        ("pyproject.toml", "[tool.ruff]\nline-length = 119\n", None),
        ("pyproject.toml", "[tool.isort]\nlines_after_imports = -1\n", None),
        ("ruff.toml", "[lint.isort]\nlines-after-imports = 2\n", 2),
        ("setup.cfg", "[isort]\nprofile = black\nlines_after_imports = 2\n", 2),
        ("setup.cfg", "[metadata]\nname = x\n", None),
    ],
)
def test_isort_lines_after_imports_of_the_files_project(tmp_path, name, text, expected):
    """The inserted device line follows the project's own isort setting (HF repositories use 2)."""
    (tmp_path / name).write_text(text)
    folder = tmp_path / "pkg" / "sub"
    folder.mkdir(parents=True)
    assert isort_lines_after_imports(str(folder)) == expected


def test_fix_follows_the_projects_lines_after_imports(tmp_path):
    """A class right after the imports says nothing about the setting: the config does."""
    (tmp_path / "pyproject.toml").write_text("[tool.ruff.lint.isort]\nlines-after-imports = 2\n")
    module = tmp_path / "model.py"
    module.write_text("import torch\n\n\nclass A:\n    pass\n\n\nx = y.cuda()\n")
    main(["-q", "--fix", "--no-cache", str(module)])
    assert module.read_text().startswith(
        'import torch\n\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n\nclass A:'
    )


def test_each_configuration_file_is_read_once_for_all_the_folders_below_it(tmp_path, monkeypatch):
    # A run asks for the line length and the isort settings of every folder it walks; both climb
    # through the same parents. Reading each file once keeps that off the CLI's per-file cost.
    from torchdevice_lint import config

    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n[tool.isort]\nlines_after_imports = 2\n")
    (tmp_path / "setup.cfg").write_text("[flake8]\nmax-line-length = 120\n")
    folders = [tmp_path / "pkg" / name for name in ("a", "b", "c")]
    reads: list[str] = []
    real_read_text = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: reads.append(str(self)) or real_read_text(self, *a, **k))
    for folder in folders:
        folder.mkdir(parents=True)
        assert config.project_line_length(str(folder)) == 100
        assert isort_lines_after_imports(str(folder)) == 2
    assert reads.count(str(tmp_path / "pyproject.toml")) == 1
