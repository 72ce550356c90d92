"""mmengine's CPU/gloo process group is destroyed at exit (``distributed.group_teardown``), as on mmcv 1.x."""
import pytest

from tests.distributed.test_group_teardown import check_teardown, kept_cases

pytestmark = [pytest.mark.mm2]


@pytest.mark.parametrize('kept', kept_cases())
def test_the_mmengine_cpu_group_is_destroyed_at_exit(kept):
    check_teardown('mmengine', kept)
