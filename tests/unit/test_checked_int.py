"""The one integer reader of the runmqsc, REST, put, browse and amqsmon parsers (clwl.parse.common.checked_int):
MQ writes numbers in ASCII digits, so anything else is a reason to quarantine the record, never a number. Python's
int() alone reads other scripts' digits ("١٢" is 12), underscores ("1_000") and refuses more than 4,300 digits
with an error the parsers did not expect."""

import pytest

from clwl.parse.common import checked_int


@pytest.mark.parametrize("text, value", [("12", 12), (" -3 ", -3), ("+7", 7), ("0", 0), ("000099", 99)])
def test_ascii_integers_are_read(text, value):
    assert checked_int(text, -100, 100) == value


@pytest.mark.parametrize("text", ["\u0661\u0662", "\uff11\uff12", "\u00b2", "1_000", "--1", "1.0", "", " ", "0x10",
                                  "1 2"])
def test_anything_else_is_not_an_integer(text):
    with pytest.raises(ValueError, match="is not an integer"):
        checked_int(text, -10_000, 10_000)


@pytest.mark.parametrize("text", ["101", "-101", "9" * 5000])
def test_out_of_range_says_so(text):
    with pytest.raises(ValueError, match=r"is out of range \(-100\.\.100\)"):
        checked_int(text, -100, 100)
