"""``Settings.model`` / ``Settings.attack``: one lookup, one message naming the way out."""

from __future__ import annotations

import pandas as pd
import pytest

from robustbnn.errors import ConfigError
from robustbnn.report.markdown import with_run
from robustbnn.settings import Settings


def test_settings_lookup_finds_and_names_the_flag() -> None:
    settings = Settings(models=(("mlp", "cfg"),), attacks=(("pgd", "atk"),))
    assert (settings.model("mlp"), settings.attack("pgd")) == ("cfg", "atk")
    with pytest.raises(ConfigError) as err:
        settings.model("bbb")
    assert str(err.value) == ("model 'bbb' is not one of this run's models ['mlp']; "
                              "add it with --models")
    with pytest.raises(ConfigError) as err:
        settings.attack("fgsm")
    assert str(err.value) == ("attack 'fgsm' is not one of this run's attacks ['pgd']; "
                              "add it with --attacks")


def test_with_run_adds_run_zero_only_when_missing() -> None:
    frame = pd.DataFrame({"value": [1.0, 2.0]})
    assert list(with_run(frame)["run"]) == [0, 0]
    runs = frame.assign(run=[3, 4])
    assert with_run(runs) is runs
