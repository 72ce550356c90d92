from .evaluate_kradar import kradar_eval

__all__ = ['kradar_eval']
