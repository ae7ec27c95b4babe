"""(to be filled)"""
__all__: list[str] = []
