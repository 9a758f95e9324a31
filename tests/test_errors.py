"""kit/errors.py: the few errors a user meets, each one sentence and a tip, with the exit code it ends in."""

from __future__ import annotations

import pytest

from kit import errors
from kit.exit_codes import EXIT_FAILED, EXIT_NETWORK, EXIT_USAGE


def test_render_is_an_error_line_and_a_tip_line() -> None:
    error = errors.ConfigError("release[0].version 'x' is not a plain JAX release number", "write it like 0.4.35")
    assert error.render() == ("ERROR: release[0].version 'x' is not a plain JAX release number\n"
                              "TIP: write it like 0.4.35")
    assert str(error) == error.message == "release[0].version 'x' is not a plain JAX release number"


def test_no_tip_means_no_tip_line() -> None:
    # An empty "TIP: " line would read as a tip that was lost.
    assert errors.UsageError("unknown command 'x'").render() == "ERROR: unknown command 'x'"


def test_a_multi_line_message_stays_as_given() -> None:
    assert errors.KitError("a\nb", "c").render() == "ERROR: a\nb\nTIP: c"


@pytest.mark.parametrize("kind, code", [(errors.KitError, EXIT_USAGE), (errors.ConfigError, EXIT_USAGE),
                                        (errors.UsageError, EXIT_USAGE), (errors.StorageError, EXIT_FAILED),
                                        (errors.OverlayUnwritable, EXIT_FAILED),
                                        (errors.HistoryUnreachable, EXIT_NETWORK)])
def test_each_error_ends_in_its_exit_code(kind: type[errors.KitError], code: int) -> None:
    # A full disk is a failure, not bad input; an outage is the network's, not the user's.
    assert kind("m").exit_code == code


def test_an_unreachable_archive_is_caught_where_an_unreachable_index_is() -> None:
    # The command line turns IndexUnreachable into exit 4; the archive's case must take the same road.
    with pytest.raises(errors.IndexUnreachable):
        raise errors.ArchiveUnreachable("jaxlib 0.4.14 is only in JAX's archive, which did not answer")
    assert issubclass(errors.IndexUnreachable, errors.PackageIndexError)


def test_an_overlay_that_cannot_be_written_is_a_storage_error() -> None:
    # A bisect's handlers of a full disk must meet it too (tests/faults/test_overlay_space.py runs it).
    assert issubclass(errors.OverlayUnwritable, errors.StorageError)
    assert not issubclass(errors.StorageError, errors.UsageError)

