"""The public Python API is typed: py.typed ships with the package, and every public function's
parameters and result carry annotations that resolve."""

import inspect
import typing
from pathlib import Path

import spark_gazette
from spark_gazette import admin


def _public_functions():
    for module, names in (
        (spark_gazette, spark_gazette.__all__),
        (admin, [n for n in dir(admin) if not n.startswith("_")]),
    ):
        for name in names:
            obj = getattr(module, name)
            if inspect.isfunction(obj) and obj.__module__.startswith("spark_gazette"):
                yield f"{module.__name__}.{name}", obj


def test_every_public_function_is_fully_annotated_and_its_annotations_resolve():
    functions = dict(_public_functions())
    assert {
        "spark_gazette.read_stream",
        "spark_gazette.write",
        "spark_gazette.configure_spark_with_gazette",
        "spark_gazette.admin.publish",
    } <= functions.keys()
    for name, f in functions.items():
        sig = inspect.signature(f)
        missing = [p for p, v in sig.parameters.items() if v.annotation is inspect.Parameter.empty]
        assert not missing, f"{name}: parameters without annotations: {missing}"
        assert sig.return_annotation is not inspect.Signature.empty, f"{name}: no return annotation"
        typing.get_type_hints(f, localns=_pyspark_names())


def test_the_installed_package_is_marked_typed():
    assert (Path(spark_gazette.__file__).parent / "py.typed").is_file()


def _pyspark_names() -> dict:
    from pyspark.sql import Column, DataFrame, DataFrameReader, SparkSession
    from pyspark.sql.streaming import DataStreamReader, DataStreamWriter
    from pyspark.sql.types import StructType

    return {
        "Column": Column,
        "DataFrame": DataFrame,
        "DataFrameReader": DataFrameReader,
        "SparkSession": SparkSession,
        "DataStreamReader": DataStreamReader,
        "DataStreamWriter": DataStreamWriter,
        "StructType": StructType,
    }
