"""mmengine's CPU/gloo process group is destroyed at exit (``distributed.group_teardown``), as on mmcv 1.x."""
import pytest

from tests.distributed.test_group_teardown import check_teardown

pytestmark = [pytest.mark.mm2]


def test_the_mmengine_cpu_group_is_destroyed_at_exit():
    check_teardown('mmengine')
