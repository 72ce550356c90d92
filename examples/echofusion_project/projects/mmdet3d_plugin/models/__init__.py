from .nms_free_head import NMSFreeAnchor3DHead

__all__ = ['NMSFreeAnchor3DHead']
