from __future__ import annotations

from typing import Optional

import libcst as cst

from torchdevice_lint.analysis import Receiver, torch_api
from torchdevice_lint.analysis.imports import dotted_name
from torchdevice_lint.analysis.receivers import reaching_assignment
from torchdevice_lint.analysis.tree import string_value, walk
from torchdevice_lint.findings import Fix, Safety
from torchdevice_lint.rule import Invalid, Rule

#: The keywords ``Tensor.to``, ``.cuda()`` and the dtype conversions accept.
TENSOR_KEYWORDS = frozenset({"device", "dtype", "non_blocking", "copy", "memory_format"})


#: Context managers of tests that expect the statements in them to raise.
RAISES_CONTEXTS = frozenset({"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})


class DiscardedConversion(Rule):
    """
    ## What it does
    Flags a statement that converts a tensor and throws the result away: `x.to(device)`,
    `x.cuda()`, `x.cpu()`, `x.float()`, `x.half()`, `x.double()`, `x.bfloat16()`,
    `x.type(...)` on its own line.

    ## Why is this bad?
    `Tensor.to()` and its relatives return a new tensor; the tensor they are called on does not
    change. The line does nothing, and the tensor stays where it was, which surfaces later as
    `Expected all tensors to be on the same device`. It is easy to write because
    `nn.Module.to()` does work in place, so `model.to(device)` is correct.

    A receiver is taken for a tensor unless it is known, or very likely, to convert in place:
    a module (made from an `nn.Module` class of torch or of the project, annotated as one, or
    named like one: `model`, `net`, `net_g`, `text_encoder`, `criterion`, `mod`, plurals such as
    `named_linears`, `self`, `self.<layer>`; or made by calling a name that holds a class:
    `linear_func = FpQuantLinear if fp else IntQuantLinear`), a Hugging Face `BatchEncoding`
    (what a tokenizer or feature extractor returns; not when it is given a tensor it had moved
    first, `feats = extractor(samples.to(device))`, which makes it a module at work), a PyTorch Geometric `Data`/`Batch` (`data`, `batch`, `graph` in
    files that import it), or an object of a class of the project with its own `to` that returns `self`. An object of a class of
    the project whose `to` returns a new object (`return other`, `return type(self)(...)`, as
    pytorch3d's `Transform3d` does) is flagged. A DGL graph is flagged too: since DGL 0.5 its
    `to()` returns a copy (`g`, `graph` in files that import `dgl`, what `dgl.graph()` makes), in
    DGL's backend-agnostic code too, which never imports torch. What an unknown call
    returns (`thing = load(path)`), what an alternate constructor makes
    (`Rag.from_pretrained_encoder_generator(...)`) and a whole loader item (`for batch in loader`,
    `for step, batch in tqdm(enumerate(loader))`) are left
    alone. Tuple-unpacked batch elements (`for images, labels in loader`), the items of a
    module's `parameters()`/`buffers()`, the values of a mapping argument annotated as one of
    tensors (`data: Dict[str, torch.Tensor]`, also through a type alias of the module),
    what the legacy constructors (`torch.Tensor([...])`, `torch.LongTensor(n)`) and
    `Variable(x)` make, arguments, model outputs and what tensor methods return
    are tensors; a test's argument named after a pytest
    fixture of the file is what the fixture returns, and one that `@pytest.mark.parametrize` gives
    is what it lists (`[BoxUniform(...), ...]`: objects). A statement in a `with pytest.raises(...)`
    (or `self.assertRaises(...)`) block is run for the error it raises and is not flagged.
    The items of a collection of modules are modules: what a helper named after modules
    gathers (`qlayers = get_layers(model); qlayers[name].to("cpu")`) or what
    `named_modules()`/`named_children()` list. An item looked up with `.get()`
    (`node_idx = kwargs.get("node_idx")`) is what the same item read with `[]` is, not what a
    builder named `get_...` makes. An attribute of the class that its methods assign tensors (a
    factory, a `torch.*` result) is a tensor, beside a `None` placeholder too (`self.probs = None`
    in `__init__`, `self.probs = torch.zeros(k)` in a setup method); `self.<layer>` assigned a
    module or an unknown object stays a module. An attribute or item is what the last assignment
    to it before the statement made it: `self.linear.weight = bnb.nn.Params4bit(...)` replaces
    the Linear's weight tensor by an object of another class, whose `cuda()` quantizes it in place.
    So is a name, when one plain assignment certainly reaches the statement (the last one before
    it in its block or an enclosing block, with no loop, `try` or other binding between):
    `mask = mask[..., None].bool()` makes `mask` a tensor whatever `mask` was first bound to. A conversion of a fresh tensor
    (`torch.ones(1).to(device)`) is not flagged: no variable was meant to move, and such a
    line is written for its side effect, such as creating the CUDA context.

    ## Example
    ```python
    def train_epoch(model, loader: DataLoader, device):
        for images, labels in loader:
            images.to(device)
            labels.to(device)
            loss = criterion(model(images), labels)
    ```

    ## Use instead
    ```python
    def train_epoch(model, loader: DataLoader, device):
        for images, labels in loader:
            images = images.to(device)
            labels = labels.to(device)
            loss = criterion(model(images), labels)
    ```

    ## Fix safety
    The fix assigns the result back to the name or attribute it was called on
    (`x = x.to(device)`). It is safe for a variable of the function (or module) that the
    analysis proves is a tensor, or that an enclosing `if isinstance(x, torch.Tensor):` or
    `elif torch.is_tensor(x):` does. It is unsafe where the receiver was taken for a tensor by
    default (an argument, an unpacked batch element): an object whose own `to()` returns
    nothing would be replaced by `None`. It is unsafe for an attribute (`self.mean =
    self.mean.to(x.device)`), which changes what the object holds. There is no fix for an
    attribute holding an `nn.Parameter` (a converted copy is no longer one and cannot be
    assigned to it), for a name of an outer or global scope (assigning it would make it local
    to the function), or for other receivers (`batch[0].to(device)`).
    """

    code = "TDL004"
    name = "discarded-conversion"
    message = "`{receiver}.{method}()` returns a new {copy} and the result is discarded; assign it"
    needles = ("torch", "dgl")

    valid = (
        "import torch\nmodel = torch.nn.Linear(2, 2)\nmodel.to(device)\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def move(self, device):\n        self.to(device)\n",
        "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.encoder = nn.Linear(2, 2)\n        self.encoder.to('cpu')\n",
        "import torch\nx = torch.zeros(3)\nx = x.to(device)\n",
        "import torch\nbatch = tokenizer(texts, return_tensors='pt')\nbatch.to(device)\n",
        "import torch\nfeatures = feature_extractor(audio, sampling_rate=16000)\nfeatures.to(device)\n",
        "import torch\nfeatures = processor(images.to(device), return_tensors='pt')\nfeatures.to(device)\n",
        "import torch\nfrom transformers import BatchEncoding\nbatch = BatchEncoding(data)\nbatch.to(device)\n",
        "import torch\n\nclass Storage:\n    def to(self, device):\n        self.obs = self.obs.to(device)\n\n"
        "storage = Storage()\nstorage.to(device)\n",
        "import torch\nfrom torch_geometric.data import Data\ndata = Data(x=x)\ndata.to(device)\n",
        "import torch\nthing.to(device)\n",
        "import torch\n\ndef check(device):\n    torch.ones(1).to(device)\n",
        # Named like modules: arguments and results of unknown builders.
        "import torch\n\ndef train(net_g, text_encoder, ema_model, criterion, device):\n"
        "    net_g.cuda()\n    text_encoder.to(device)\n    ema_model.to(device)\n    criterion.to(device)\n",
        "import torch\nthing = torch.hub.load('owner/repo', 'resnet')\nthing.to(device)\nrunner = load_runner(cfg)\n"
        "runner.cuda()\n",
        # PyTorch Geometric batches move in place; a whole loader item may be such a batch.
        "import torch\nfrom torch_geometric.loader import DataLoader\n\ndef step(model, batch, device):\n"
        "    batch.to(device)\n    for data in loader:\n        data.to(device)\n",
        "import torch\n\ndef evaluate(model, inputs, device):\n    encoded = tokenizer(inputs, return_tensors='pt')\n"
        "    encoded.to(device)\n",
        # Items of a collection of modules: what a helper named after modules gathers, named_modules().
        "import torch\n\ndef pack(model, quant_linear):\n    qlayers = get_layers(model, [quant_linear])\n"
        "    for name in qlayers:\n        qlayers[name].to('cpu')\n    named = dict(model.named_modules())\n"
        "    named['head'].half()\n",
        # The attribute was last assigned an object of another class (bitsandbytes' Params4bit
        # quantizes itself in cuda()): the Linear's weight it replaced no longer decides.
        "import torch\nimport bitsandbytes as bnb\n\nclass LoRALinear(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.linear = torch.nn.Linear(2, 2)\n\n"
        "    def merge(self, data):\n        weight = self.linear.weight\n"
        "        self.linear.weight = bnb.nn.Params4bit(data, requires_grad=False)\n"
        "        self.linear.weight.cuda(weight.device)\n",
        # Called, or read with members tensors lack: a model staged on the GPU and back (jukebox's priors).
        "import torch\n\ndef sample(priors, levels, x):\n    for level in levels:\n        prior = priors[level]\n        prior.cuda()\n"
        "        x = prior.decode(x, length=prior.n_ctx)\n        prior.cpu()\n    return x\n",
        "import torch\n\ndef score(scorers, x):\n    scorer = scorers[0]\n    scorer.cuda()\n    return scorer(x)\n",
    )
    invalid = (
        Invalid(
            "import torch\nx = torch.zeros(3)\nx.to(device)\n",
            "import torch\nx = torch.zeros(3)\nx = x.to(device)\n",
        ),
        Invalid(
            "import torch\n\ndef f(x: torch.Tensor):\n    x.float()\n    return x\n",
            "import torch\n\ndef f(x: torch.Tensor):\n    x = x.float()\n    return x\n",
        ),
        Invalid(
            "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds)\n"
            "for inputs, targets in loader:\n    inputs.to(device)\n    targets.to(device, non_blocking=True)\n",
            "import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds)\n"
            "for inputs, targets in loader:\n    inputs = inputs.to(device)\n"
            "    targets = targets.to(device, non_blocking=True)\n",
            count=2,
        ),
        # The textbook shape: the loader comes in as an argument.
        Invalid(
            "import torch\nfrom torch.utils.data import DataLoader\n\n"
            "def train_epoch(model, loader: DataLoader, optimizer):\n    for images, labels in loader:\n"
            "        images = images.cuda()\n        labels.cuda()\n        loss = model(images, labels)\n",
            "import torch\nfrom torch.utils.data import DataLoader\n\n"
            "def train_epoch(model, loader: DataLoader, optimizer):\n    for images, labels in loader:\n"
            "        images = images.cuda()\n        labels = labels.cuda()\n        loss = model(images, labels)\n",
        ),
        Invalid(
            "import torch\n\ndef training_step(model, batch, device):\n    features, target = batch\n"
            "    features.to(device)\n    target.to(device)\n    return model(features, target)\n",
            "import torch\n\ndef training_step(model, batch, device):\n    features, target = batch\n"
            "    features = features.to(device)\n    target = target.to(device)\n    return model(features, target)\n",
            count=2,
        ),
        Invalid(  # neural_renderer's look_at: a tensor argument, proven one by torch.is_tensor
            "import torch\n\ndef look_at(vertices, at=(0, 0, 0)):\n    device = vertices.device\n"
            "    if isinstance(at, tuple):\n        at = torch.tensor(at, device=device)\n"
            "    elif torch.is_tensor(at):\n        at.to(device)\n    return vertices - at\n",
            "import torch\n\ndef look_at(vertices, at=(0, 0, 0)):\n    device = vertices.device\n"
            "    if isinstance(at, tuple):\n        at = torch.tensor(at, device=device)\n"
            "    elif torch.is_tensor(at):\n        at = at.to(device)\n    return vertices - at\n",
        ),
        Invalid(
            "import torch\n\ndef predict(model, x, device):\n    x.to(device)\n    out = model(x)\n"
            "    out.cpu()\n    batch[0].cuda()\n    return out\n",
            "import torch\n\ndef predict(model, x, device):\n    x = x.to(device)\n    out = model(x)\n"
            "    out = out.cpu()\n    batch[0].cuda()\n    return out\n",
            count=3,
        ),
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.register_buffer('mean', torch.zeros(3))\n\n"
            "    def forward(self, x):\n        self.mean.to(x.device)\n        return x - self.mean\n",
            "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.register_buffer('mean', torch.zeros(3))\n\n"
            "    def forward(self, x):\n        self.mean = self.mean.to(x.device)\n        return x - self.mean\n",
        ),
        # No fix: a Parameter cannot take a converted copy; a global cannot be rebound locally.
        Invalid(
            "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.scale = nn.Parameter(torch.ones(3))\n\n"
            "    def half_scale(self):\n        self.scale.half()\n",
            "import torch\nfrom torch import nn\n\nclass Net(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.scale = nn.Parameter(torch.ones(3))\n\n"
            "    def half_scale(self):\n        self.scale.half()\n",
        ),
        Invalid(
            "import torch\nweights = torch.ones(3)\n\ndef move(device):\n    weights.to(device)\n",
            "import torch\nweights = torch.ones(3)\n\ndef move(device):\n    weights.to(device)\n",
        ),
        Invalid("import torch\nbatch = [torch.zeros(2)]\nrows = torch.stack(batch)\nrows.cpu()\nrows[0].cpu()\n", count=2),
        # DGL's backend-agnostic tests never import torch; a DGL graph converts into a copy.
        Invalid(
            "import dgl\nimport backend as F\n\ndef test_to_device():\n    g = dgl.graph(([0], [1]))\n"
            "    g.to(F.cuda())\n",
            "import dgl\nimport backend as F\n\ndef test_to_device():\n    g = dgl.graph(([0], [1]))\n"
            "    g = g.to(F.cuda())\n",
        ),
        # What tensor methods make of a model's output, or of anything: tensors (diffusers' Kandinsky prior).
        Invalid(
            "import torch\n\ndef embed(image_encoder, image, device, n):\n"
            "    image_emb = image_encoder(image)['image_embeds']\n"
            "    image_emb = image_emb.repeat_interleave(n, dim=0)\n    image_emb.to(device=device)\n"
            "    pooled = helper(image).mean(0)\n    pooled.cuda()\n    return image_emb, pooled\n",
            "import torch\n\ndef embed(image_encoder, image, device, n):\n"
            "    image_emb = image_encoder(image)['image_embeds']\n"
            "    image_emb = image_emb.repeat_interleave(n, dim=0)\n    image_emb = image_emb.to(device=device)\n"
            "    pooled = helper(image).mean(0)\n    pooled = pooled.cuda()\n    return image_emb, pooled\n",
            count=2,
        ),
        # Given a tensor it moved first, an "extractor" is a module at work, not a Hugging Face
        # feature extractor: its output is a tensor (lhotse's kaldi feature extraction).
        Invalid(
            "import torch\n\ndef extract(samples, extractor, device):\n    input_device = samples.device\n"
            "    feats = extractor(samples.to(device))\n    feats.to(input_device)\n    return feats\n",
            "import torch\n\ndef extract(samples, extractor, device):\n    input_device = samples.device\n"
            "    feats = extractor(samples.to(device))\n    feats = feats.to(input_device)\n    return feats\n",
        ),
    )

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
            return
        method = call.func.attr.value
        if method not in torch_api.CONVERSION_METHODS or (method == "type" and not call.args):
            return
        receiver = call.func.value
        if isinstance(receiver, cst.Call) and self.analysis.qualified_name(receiver.func) is not None:
            # `torch.ones(1).to(device)` on its own line: no variable was meant to move; the
            # statement is run for its side effect (creating the CUDA context, a device check).
            return
        if any(arg.keyword is not None and arg.keyword.value not in TENSOR_KEYWORDS for arg in call.args):
            return  # ``bucket.to(device, keep_alignment=True)``: not ``Tensor.to``
        if self._expects_an_error():
            return  # ``with pytest.raises(...): qp.to(device)``: run for the error it raises
        functions = self.context.enclosing_functions()
        verdict = self._isinstance_guard(receiver) or self._reassigned(receiver, functions)
        if verdict is None:
            assigned = None
            if isinstance(receiver, cst.Name):
                assigned = reaching_assignment(self.context.ancestors, receiver, self.analysis.module.code_for_node)
            verdict = self.analysis.receivers.judge(receiver, functions, assigned)
        if verdict not in (Receiver.TENSOR, Receiver.LIKELY_TENSOR, Receiver.GRAPH, Receiver.COPY):
            return
        receiver_text = self.analysis.module.code_for_node(receiver)
        copy = {Receiver.GRAPH: "graph", Receiver.COPY: "object"}.get(verdict, "tensor")
        message = self.message.format(receiver=receiver_text, method=method, copy=copy)
        self.report(call, message, self._fix(node, call, receiver, verdict, functions))

    def _expects_an_error(self) -> bool:
        """The statement is in a ``with pytest.raises(...)`` (or ``self.assertRaises(...)``) block."""
        for node in self.context.ancestors:
            if isinstance(node, cst.With):
                for item in node.items:
                    call = item.item
                    if isinstance(call, cst.Call) and (dotted_name(call.func) or "").rsplit(".", 1)[-1] in RAISES_CONTEXTS:
                        return True
        return False

    def _reassigned(self, receiver: cst.BaseExpression, functions) -> Optional[Receiver]:
        """What an attribute or item is after the last assignment to it in the statements before
        this one (in its block and the enclosing blocks of the function): ``self.linear.weight =
        bnb.nn.Params4bit(...)`` makes the weight of a Linear an object of another class, whose
        ``cuda()`` may well work in place (bitsandbytes quantizes it there)."""
        if not isinstance(receiver, (cst.Attribute, cst.Subscript)):
            return None
        value = reaching_assignment(self.context.ancestors, receiver, self.analysis.module.code_for_node)
        if value is None:
            return None
        verdict = self.analysis.receivers.judge_assigned(value, functions)
        # Only what the assignment shows for certain outranks the attribute's own evidence:
        # ``self.clip = clip.load(arch)[0]`` (an item of what a loader returns, a tensor only by
        # default) leaves ``self.clip`` a layer of the module.
        return None if verdict is Receiver.LIKELY_TENSOR else verdict

    def _isinstance_guard(self, receiver: cst.BaseExpression) -> Optional[Receiver]:
        """What an enclosing ``if isinstance(x, torch.Tensor):`` (or ``nn.Module``, or a conjunct
        of an ``and``), an ``elif torch.is_tensor(x):``, or an ``assert isinstance(x, ...)``
        before the statement in its block says."""
        ancestors = self.context.ancestors
        for index in range(len(ancestors) - 2, -1, -1):
            guard = ancestors[index]
            if isinstance(guard, cst.If) and ancestors[index + 1] is guard.body:
                verdict = self._type_test(guard.test, receiver)
                if verdict is not None:
                    return verdict
            elif isinstance(guard, cst.IndentedBlock):
                current = ancestors[index + 1]
                statements = list(guard.body)
                position = next((i for i, statement in enumerate(statements) if statement is current), 0)
                for statement in reversed(statements[:position]):
                    if not isinstance(statement, cst.SimpleStatementLine):
                        continue
                    for small in statement.body:
                        if isinstance(small, cst.Assert):
                            verdict = self._type_test(small.test, receiver)
                            if verdict is not None:
                                return verdict
        return None

    def _type_test(self, test: cst.BaseExpression, receiver: cst.BaseExpression) -> Optional[Receiver]:
        """What ``test`` (``isinstance(x, C)``, ``torch.is_tensor(x)``, or an ``and`` of tests)
        says of ``receiver`` when it holds."""
        code = self.analysis.module.code_for_node
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._type_test(test.left, receiver) or self._type_test(test.right, receiver)
        if not (isinstance(test, cst.Call) and test.args and code(test.args[0].value) == code(receiver)):
            return None
        if self.analysis.qualified_name(test.func) == "torch.is_tensor" and len(test.args) == 1:
            return Receiver.TENSOR
        if not (dotted_name(test.func) == "isinstance" and len(test.args) == 2):
            return None
        kind = self.analysis.qualified_name(test.args[1].value) or ""
        if kind == "torch.Tensor" or kind in torch_api.NN_TENSOR_CLASSES:
            return Receiver.TENSOR
        return Receiver.IN_PLACE if kind == "torch.nn.Module" or torch_api.is_torch_nn_module_class(kind) else Receiver.UNKNOWN

    def _fix(self, node: cst.Expr, call: cst.Call, receiver, verdict: Receiver, functions) -> Optional[Fix]:
        """``x = x.to(...)``: safe for a variable of this scope proven a tensor."""
        if isinstance(receiver, cst.Name):
            if not self.analysis.receivers.binds_locally(receiver.value, functions):
                return None  # assigning would make a global or outer variable local to the function
            safety = Safety.SAFE if verdict is Receiver.TENSOR else Safety.UNSAFE
        elif isinstance(receiver, cst.Attribute):
            if self._names_parameter(receiver):
                return None  # a converted copy cannot be assigned to a Parameter attribute
            safety = Safety.UNSAFE
        else:
            return None
        assignment = cst.Assign(targets=[cst.AssignTarget(target=receiver)], value=call)
        return Fix(safety, ((node, assignment),))

    def _names_parameter(self, receiver: cst.Attribute) -> bool:
        """``self.<name>`` assigned an ``nn.Parameter`` (or registered as one) in its class."""
        if not (isinstance(receiver.value, cst.Name) and receiver.value.value == "self"):
            return False
        owner = next((n for n in reversed(self.context.ancestors) if isinstance(n, cst.ClassDef)), None)
        if owner is None:
            return False
        name = receiver.attr.value
        for found in walk(owner):
            if isinstance(found, cst.Assign) and isinstance(found.value, cst.Call):
                targets = [t.target for t in found.targets]
                if any(isinstance(t, cst.Attribute) and t.attr.value == name for t in targets):
                    if self.analysis.qualified_name(found.value.func) in torch_api.NN_TENSOR_CLASSES:
                        return True
            elif isinstance(found, cst.Call) and isinstance(found.func, cst.Attribute):
                if found.func.attr.value == "register_parameter" and found.args:
                    if string_value(found.args[0].value) == name:
                        return True
        return False

