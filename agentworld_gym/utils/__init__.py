from .check import check_env

__all__ = ["check_env"]
