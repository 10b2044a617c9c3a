"""The commands `python -m spark_gazette` runs (see `spark_gazette.__main__`), one module each."""
