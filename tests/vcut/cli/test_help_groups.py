"""``vcut COMMAND --help`` in argument groups (issue 64, item 6).

Every command with more than 12 options lists them in titled groups, in the order a
user needs them; argparse's own "options" group keeps only ``-h/--help``.
"""

import argparse
import re

import pytest

from vcut.cli import build_parser, main

_PIPELINE = ["inputs and tracing", "sandbox", "partitioning", "mapping and machine", "outputs"]

#: Per command: its groups in ``--help`` order, each with options it must hold.
GROUPS = {
    "trace": {
        "inputs and tracing": ["PROGRAM.c", "-O", "-D", "-I", "--cflag", "--roi"],
        "sandbox": ["--timeout", "--memory-limit", "--max-instructions", "--sandbox", "--stdin"],
        "outputs": ["-o", "--stdout", "--json", "-v"],
    },
    "graph": {
        "inputs and tracing": ["INPUT", "-D", "--cflag", "--roi", "--no-timing"],
        "sandbox": ["--timeout", "--memory-limit", "--file-limit", "--no-sandbox", "--env"],
        "graph": ["--weights", "--war", "--waw", "--control", "--branch-latency"],
        "outputs": ["-o", "--save-trace", "--json", "-v"],
    },
    "partition": {
        "inputs": ["GRAPH", "--format", "--duplicates"],
        "partitioning": ["-p", "--algo", "--seed", "--imbalance", "--capacities", "--refine",
                         "--preset"],
        "par": ["--latency", "--beta", "--gamma", "--chain-slack", "--grains", "--grain-unit"],
        "spac, hep and multilevel": ["--backend", "--variant", "--tau", "--refiner", "--scheme"],
        "devices, distributed and out-of-core": ["--device", "--apply", "--batch", "--workers",
                                                 "--scheduler", "--out-of-core", "--spill"],
        "outputs": ["-o", "--json", "--progress", "-v"],
    },
    "analyze": dict(zip(_PIPELINE, [
        ["INPUT", "-D", "--cflag", "--roi", "--window", "--windows", "--weights", "--control",
         "--branch-latency", "--spill"],
        ["--timeout", "--memory-limit", "--max-instructions", "--sandbox", "--keep-files"],
        ["-p", "--algo", "--seed", "--lambda", "--partition", "--device", "--compare-methods",
         "--control-models"],
        ["--machine", "--mapping", "--threshold", "--no-baselines"],
        ["-o", "--json", "--progress", "-v"],
    ])),
    "compare": dict(zip(_PIPELINE, [
        ["INPUT", "-D", "--cflag", "--roi", "--window", "--weights", "--control",
         "--branch-latency", "--duplicates"],
        ["--timeout", "--memory-limit", "--sandbox", "--env"],
        ["-p", "--methods", "--seed", "--order"],
        ["--machine", "--mapping", "--threshold"],
        ["-o", "--json", "--progress", "-v"],
    ])),
    "schedule": {
        "job": ["--job", "--size", "--units", "--rounds", "--seed", "--check"],
        "scheduling": ["--policy", "--profile-units", "--training"],
        "devices": ["--devices", "--workers", "--scheduler"],
        "outputs": ["--report", "--json", "-v"],
    },
}

#: How many options (``-h`` and positionals included) each group holds.
COUNTS = {
    "trace": [1, 8, 10, 4],
    "graph": [1, 8, 10, 5, 4],
    "partition": [1, 3, 10, 6, 5, 7, 4],
    "analyze": [1, 16, 10, 11, 4, 4],
    "compare": [1, 14, 10, 6, 3, 4],
    "schedule": [1, 6, 3, 3, 3],
}


def _commands():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def _help(capsys, monkeypatch, command):
    """``vcut COMMAND --help`` through `main`, 100 columns wide."""
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


def _at(text, option):
    """Where ``option`` (an option string or a positional's metavar) is listed."""
    found = re.search(rf"^  {re.escape(option)}(?=[ ,\n])", text, re.M)
    assert found, f"{option} not in the help"
    return found.start()


def test_every_command_with_many_options_is_grouped():
    many = {name for name, p in _commands().items() if len(p._actions) > 12}
    assert many == set(GROUPS)


@pytest.mark.parametrize("command", sorted(GROUPS))
def test_help_lists_the_groups_in_order_with_their_options(command, capsys, monkeypatch):
    text = _help(capsys, monkeypatch, command)
    titles = ["options", *GROUPS[command]]
    starts = [text.find(f"\n{title}:\n") for title in titles]
    assert all(s >= 0 for s in starts), dict(zip(titles, starts))
    assert starts == sorted(starts)
    headers = re.findall(r"^(\S[^\n]*):\n", text[text.find("\noptions:\n"):], re.M)
    assert headers == titles  # no other section (no "positional arguments")
    bounds = [*starts, len(text)]
    for k, title in enumerate(titles):
        section = text[bounds[k]:bounds[k + 1]]
        assert re.search(r"^  [-A-Z]", section, re.M), f"{title} is empty"
        for option in GROUPS[command].get(title, []):
            assert bounds[k] < _at(text, option) < bounds[k + 1], (title, option)
    listed = re.findall(r"^  (-\S+|[A-Z][\w.]*)", text[bounds[0]:bounds[1]], re.M)
    assert listed == ["-h,"]


@pytest.mark.parametrize("command", sorted(GROUPS))
def test_groups_of_the_parser(command):
    parser = _commands()[command]
    groups = {g.title: g._group_actions for g in parser._action_groups}
    default = [t for t in groups if t not in GROUPS[command]]
    assert default == ["positional arguments", "options"]
    assert groups["positional arguments"] == []
    assert [a.option_strings for a in groups["options"]] == [["-h", "--help"]]
    titled = [g for g in parser._action_groups if g.title in GROUPS[command]]
    assert [g.title for g in titled] == list(GROUPS[command])
    assert all(g.description for g in titled)
    assert [len(g._group_actions) for g in [parser._action_groups[1], *titled]] == \
        COUNTS[command]
    assert sum(COUNTS[command]) == len(parser._actions)
