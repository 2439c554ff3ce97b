"""Helpers shared by the export generators (hf/make_exports.py,
torchvision/make_exports.py): the parameter list check_export.py reads, and
the stripping of the exporters' node annotations."""
import onnx


def write_params(model, path):
    """named_parameters(), with the aliases of tied tensors: the exporters
    name a tied tensor after either of its modules (the TorchScript exporter
    the first, the dynamo exporter the last), so every name is listed and a
    '# tied:' line groups the names of one tensor."""
    groups = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        groups.setdefault(id(p), []).append("model." + name)
    with open(path, "w") as f:
        f.write("# model.named_parameters(remove_duplicate=False) of the Step\n")
        for names in groups.values():
            if len(names) > 1:
                f.write("# tied: " + " ".join(names) + "\n")
        for names in groups.values():
            for name in names:
                f.write(name + "\n")


def strip_node_annotations(path, keep=()):
    """Drops the nodes' doc strings and metadata but the keys in `keep` (the
    dynamo exporter's stack traces and module scopes: two thirds of a small
    export's bytes); the graph, the initializers and the metadata of values
    are kept as exported."""
    model = onnx.load(path)
    for node in model.graph.node:
        node.doc_string = ""
        kept = [(p.key, p.value) for p in node.metadata_props if p.key in keep]
        del node.metadata_props[:]
        for key, value in kept:
            node.metadata_props.add(key=key, value=value)
    onnx.save(model, path)
