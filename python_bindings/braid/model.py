"""Models: a model spec (docs/model-spec.md) or a Braid MLIR module."""
import copy
import json
import pathlib

from . import _native


class Model:
    """A model Braid can compile: a spec (`spec`, a dict) or an MLIR module
    (`path`). `mlir` is the global program the spec imports to."""

    def __init__(self, spec=None, path=None, mlir=None):
        self.spec = spec
        self.path = path
        self.mlir = mlir

    @property
    def name(self):
        if self.spec is not None:
            return self.spec.get("name", "model")
        return pathlib.Path(self.path).stem

    @property
    def tables(self):
        """The spec's tables (name, num_embeddings, embedding_dim, ...)."""
        return list(self.spec.get("tables", [])) if self.spec else []

    def write(self, directory):
        """Writes the model where braid-compile can read it; returns the path."""
        if self.spec is None:
            return str(self.path)
        path = pathlib.Path(directory) / "model_spec.json"
        path.write_text(json.dumps(self.spec, indent=2) + "\n")
        return str(path)

    def __repr__(self):
        kind = f"{len(self.tables)} tables" if self.spec is not None else self.path
        return f"<braid.Model {self.name}: {kind}>"


def load_model(path_or_dict):
    """A Model from a spec dict, a spec file (.json) or a module (.mlir).

    A spec is imported at once, so a bad one raises braid.Error with the
    importer's message naming the field."""
    if isinstance(path_or_dict, Model):
        return path_or_dict
    if isinstance(path_or_dict, dict):
        spec = copy.deepcopy(path_or_dict)
        try:
            text = json.dumps(spec)
        except (TypeError, ValueError) as error:
            raise _native.Error(f"the model spec is not JSON: {error}") from None
        mlir = _native.call(_native.native().import_model, text, "<model spec>")
        return Model(spec=spec, mlir=mlir)
    if not isinstance(path_or_dict, (str, pathlib.Path)):
        raise _native.Error("load_model takes a spec dict or a path, not "
                            f"{type(path_or_dict).__name__}")
    path = pathlib.Path(path_or_dict)
    if not path.is_file():
        raise _native.Error(f"no model file '{path}'")
    if path.suffix == ".mlir":
        return Model(path=str(path.resolve()))
    try:
        text = path.read_text()
        spec = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise _native.Error(f"{path}: cannot read a JSON model spec: {error}") from None
    if not isinstance(spec, dict):
        raise _native.Error(f"{path}: a model spec is a JSON object")
    mlir = _native.call(_native.native().import_model, text, str(path))
    return Model(spec=spec, mlir=mlir)
