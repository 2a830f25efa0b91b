"""bridge list and bridge show name the opt-in alternatives (`--with`)."""

from __future__ import annotations

from bridge.catalog import scenario
from bridge.cli import listing


def test_list_names_the_opt_in_calls_under_their_kind():
    text = listing.list_text()
    random = text.split("random: ")[1].split("\n\n")[0]
    assert "opt-in calls (crypto-bridge run SCENARIO --with CALL): erlang:rand_bytes" in random
    kdf = text.split("kdf: ")[1].split("\n\n")[0]
    assert "erlang:pbkdf2_mac, erlang:pbkdf2_mac_init" in kdf
    mac = text.split("mac: ")[1].split("\n\n")[0]
    assert "opt-in" not in mac  # a kind with no alternative says nothing


def test_show_describes_each_opt_in_and_stays_a_scenario_file(tmp_path):
    text = listing.show_text("ecdsa-p256")
    assert "# erlang, opt-in (crypto-bridge run ecdsa-p256 --with erlang:CALL):" in text
    assert "#   public_key:verify: public_key:verify(Msg, sha256, Sig, {ECPoint, Params})" in text
    assert "must accept the driver's signature" in text
    path = tmp_path / "copy.toml"
    path.write_text(text)
    assert scenario.load(str(path)).calls == scenario.load("ecdsa-p256").calls


def test_completion_past_a_scenario_dir_that_is_no_directory_offers_the_builtins():
    """A --scenario-dir typed as /dev/zero is refused when the command runs;
    completing the scenario name after it offers the built-ins, no traceback."""
    import click

    from bridge.cli.run import run
    from bridge.cli.scenarios import complete_scenarios

    ctx = click.Context(run)
    ctx.params["scenario_dirs"] = ("/dev/zero",)
    names = [item.value for item in complete_scenarios(ctx, None, "hmac-")]
    assert "hmac-sha1" in names


def test_show_of_every_builtin_describes_each_call_within_the_width():
    """Every built-in scenario shows (hmac-parts' timed parts, whose output is
    no MAC, once raised KeyError), each '#' line within the width, its
    further lines two spaces under its text, and the whole still the file."""
    for name in scenario.available():
        text = listing.show_text(name, width=60)
        file = scenario.find(name).read_text()
        assert text.endswith(file), name  # the file as it is, after the description
        head = text[: -len(file)].splitlines()
        assert all(line.startswith("#") for line in head), name
        # A word longer than the line (the file's path) is the one line left long.
        assert all(len(line) <= 60 or " " not in line[1:].strip() for line in head), name
    parts = listing.show_text("hmac-parts", width=80)
    assert "#     output: not checked: a part, no MAC: timed to take a call's cost apart" in parts


def test_a_long_comment_line_folds_under_its_text():
    line = "#     measures: " + " ".join(["word"] * 30)
    folded = listing._comment(line, 40)
    assert folded[0].startswith("#     measures: word")
    assert all(f.startswith("#       word") for f in folded[1:])
    assert all(len(f) <= 40 for f in folded)
    assert listing._comment(line, None) == [line]
