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
