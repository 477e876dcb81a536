"""Settings: the configuration file (``config``) and the resolution of host, key and
output directory (flag > environment > file > default), turned into an engine
``Runtime`` by ``session``.  Every front end builds its runtime here.
"""
