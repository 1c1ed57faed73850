"""The public agreement of a federated release (ddppm.federation.agreement): checked before anything runs, a
round trip through its message form, and a digest that any change moves."""

from __future__ import annotations

import pytest

from ddppm.core.errors import DDPPMError
from ddppm.federation.agreement import Agreement
from tests.federation.conftest import BOUNDS, SIZES


def test_the_message_form_round_trips_and_every_change_moves_the_digest():
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", seed=3)
    assert Agreement.from_dict(agreement.to_dict()) == agreement
    assert Agreement.from_dict(agreement.to_dict()).digest() == agreement.digest()
    for change in ({"epsilon": 5.5}, {"sizes": [60, 60, 59]}, {"method": "cape"}, {"bounds": {**BOUNDS, "x": 1}}):
        assert Agreement.from_dict({**agreement.to_dict(), **change}).digest() != agreement.digest()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"sizes": [178]}, "two or more parties"),
        ({"trust": "central"}, "must be one of"),
        ({"method": "auto"}, "name the method"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"noise": "numpy"}, "noise"),
        ({"method_options": {"adjacency": "add_remove"}}, "cannot be set"),
        ({"colour": "red"}, "unknown keys \\['colour'\\]"),
    ],
)
def test_a_bad_agreement_is_refused_with_the_key_to_fix(change, message):
    base = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional").to_dict()
    with pytest.raises(DDPPMError, match=message):
        Agreement.from_dict({**base, **change})
