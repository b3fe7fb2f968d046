import pytest

from jupyterlab_vram_helper.config import ConfigError, SamplerConfig


def test_defaults_match_the_protocol_example() -> None:
    assert SamplerConfig().to_dict() == {
        "interval_s": 1.0,
        "change_threshold_bytes": 1048576,
        "heartbeat_s": 10.0,
        "reset_peak_per_cell": True,
        "watch_cluster": True,
        "cluster_interval_s": 2.0,
    }


def test_partial_update_keeps_other_keys() -> None:
    c = SamplerConfig().updated({"interval_s": 0.25})
    assert c == SamplerConfig(interval_s=0.25, change_threshold_bytes=1048576, heartbeat_s=10.0)
    assert isinstance(c.interval_s, float)


def test_integral_float_threshold_is_accepted_as_int() -> None:
    assert SamplerConfig.from_dict({"change_threshold_bytes": 2048.0}).change_threshold_bytes == 2048


@pytest.mark.parametrize(
    "partial,needle",
    [
        ({"interval_s": 0.049}, "interval_s must be a number between 0.05 and 60, got 0.049"),
        ({"interval_s": 61}, "interval_s"),
        ({"interval_s": "1"}, "got '1'"),
        ({"interval_s": None}, "got None"),
        ({"interval_s": True}, "interval_s"),
        ({"interval_s": float("nan")}, "interval_s"),
        ({"interval_s": float("inf")}, "interval_s"),
        ({"interval_s": 10**400}, "interval_s"),
        ({"change_threshold_bytes": -1}, "change_threshold_bytes"),
        ({"change_threshold_bytes": 1.5}, "change_threshold_bytes"),
        ({"change_threshold_bytes": 2**53}, "change_threshold_bytes"),
        ({"change_threshold_bytes": 10**400}, "change_threshold_bytes"),
        ({"heartbeat_s": 601}, "heartbeat_s"),
        ({"heartbeat_s": 0.5}, "heartbeat_s must be at least interval_s (1)"),
        ({"interval_s": 20}, "heartbeat_s must be at least interval_s (20)"),
        ({"intervall_s": 1}, "unknown config key 'intervall_s'"),
        ({"reset_peak_per_cell": 1}, "reset_peak_per_cell must be true or false, got 1"),
        ({"reset_peak_per_cell": "false"}, "reset_peak_per_cell must be true or false"),
        ({"reset_peak_per_cell": None}, "reset_peak_per_cell must be true or false, got None"),
    ],
)
def test_invalid_values_name_the_problem(partial, needle) -> None:
    base = SamplerConfig()
    with pytest.raises(ConfigError) as info:
        base.updated(partial)
    assert needle in str(info.value)
    assert base == SamplerConfig()  # unchanged


def test_heartbeat_checked_against_the_new_interval() -> None:
    c = SamplerConfig().updated({"interval_s": 20, "heartbeat_s": 30})
    assert (c.interval_s, c.heartbeat_s) == (20.0, 30.0)


def test_not_a_mapping() -> None:
    with pytest.raises(ConfigError, match="must be an object"):
        SamplerConfig().updated([1])  # type: ignore[arg-type]


def test_reset_peak_per_cell_can_be_turned_off_alone() -> None:
    c = SamplerConfig().updated({"reset_peak_per_cell": False})
    assert c == SamplerConfig(reset_peak_per_cell=False)
    assert c.to_dict()["reset_peak_per_cell"] is False


def test_cluster_watching_is_on_by_default_and_its_interval_is_bounded() -> None:
    c = SamplerConfig().updated({"watch_cluster": False, "cluster_interval_s": 5})
    assert c.watch_cluster is False and c.cluster_interval_s == 5.0
    for bad, words in (
        ({"watch_cluster": 1}, "watch_cluster must be true or false, got 1"),
        ({"cluster_interval_s": 0.5}, "cluster_interval_s must be a number between 1 and 60, got 0.5"),
        ({"cluster_interval_s": 61}, "cluster_interval_s must be a number between 1 and 60, got 61"),
    ):
        with pytest.raises(ConfigError, match=words):
            SamplerConfig().updated(bad)
