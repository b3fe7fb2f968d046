"""The reference models that the memory estimate is judged on, built from torch alone.

Each builder returns ``(model, optimizer, loss_fn, make_batch)`` on the device
asked for, seeded, so that the CPU benchmark (benchmarks/estimate_cost.py) and
the GPU kit (tests/cuda/test_estimate_cuda.py) estimate and run the same
steps. ``make_batch(batch_size, device)`` returns ``(inputs, target)``, and
``loss_fn(model(inputs), target)`` is the loss, as the estimate calls it for an
(input, target) batch. Sizes are chosen so that a training step on the GPU
takes hundreds of MiB to a few GiB at the three batch sizes of each entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F  # noqa: N812

Batch = tuple[Tensor, Tensor]
MakeBatch = Callable[[int, str], Batch]
LossFn = Callable[[Tensor, Tensor], Tensor]
Built = tuple[nn.Module, torch.optim.Optimizer, LossFn, MakeBatch]

SEED = 47


def _batch_maker(make: Callable[[int, torch.Generator], Batch]) -> MakeBatch:
    """A ``make_batch`` whose batches depend on the batch size alone (drawn on the CPU, then moved)."""

    def make_batch(batch_size: int, device: str = "cpu") -> Batch:
        generator = torch.Generator().manual_seed(SEED + batch_size)
        inputs, target = make(batch_size, generator)
        return inputs.to(device), target.to(device)

    return make_batch


def _images(channels: int, side: int, classes: int) -> MakeBatch:
    return _batch_maker(
        lambda n, g: (torch.randn(n, channels, side, side, generator=g), torch.randint(classes, (n,), generator=g))
    )


def _tokens(vocab: int, length: int, classes: int | None = None) -> MakeBatch:
    """Token batches: labels per sequence with ``classes``, else the next tokens (a language model's target)."""

    def make(n: int, g: torch.Generator) -> Batch:
        if classes is not None:
            return torch.randint(vocab, (n, length), generator=g), torch.randint(classes, (n,), generator=g)
        tokens = torch.randint(vocab, (n, length + 1), generator=g)
        return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

    return _batch_maker(make)


def _seeded(device: str, make: Callable[[], nn.Module]) -> nn.Module:
    torch.manual_seed(SEED)
    return make().to(device)


def mlp(device: str = "cpu") -> Built:
    """A four-layer perceptron with Adam: a step dominated by matrix products and their saved inputs."""
    model = _seeded(
        device,
        lambda: nn.Sequential(
            nn.Linear(2048, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(),
            nn.Linear(2048, 2048), nn.GELU(), nn.Linear(2048, 1000),
        ),
    )  # fmt: skip
    make = _batch_maker(lambda n, g: (torch.randn(n, 2048, generator=g), torch.randint(1000, (n,), generator=g)))
    return model, torch.optim.Adam(model.parameters(), lr=1e-3), F.cross_entropy, make


class _BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x: Tensor) -> Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


def resnet(device: str = "cpu") -> Built:
    """A ResNet-18-like CNN on 64x64 images with SGD and momentum: BatchNorm, residual blocks, strided stages."""

    def make() -> nn.Module:
        layers: list[nn.Module] = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU()]
        cin = 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [_BasicBlock(cin, cout, stride), _BasicBlock(cout, cout, 1)]
            cin = cout
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 100)]
        return nn.Sequential(*layers)

    model = _seeded(device, make)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, optimizer, F.cross_entropy, _images(3, 64, 100)


class _SequenceClassifier(nn.Module):
    """Token embedding, a sequence body, mean pooling, and a linear head."""

    def __init__(self, vocab: int, width: int, body: nn.Module, classes: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.body = body
        self.head = nn.Linear(width, classes)

    def forward(self, tokens: Tensor) -> Tensor:
        return self.head(self.body(self.embed(tokens)).mean(dim=1))


def _encoder(width: int, heads: int, layers: int) -> nn.TransformerEncoder:
    layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.1, batch_first=True, norm_first=True)
    # Nested tensors only speed up padded batches, and they warn when norm_first is set.
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)


def transformer_encoder(device: str = "cpu") -> Built:
    """A six-layer nn.TransformerEncoder text classifier on 256 tokens with AdamW."""
    model = _seeded(device, lambda: _SequenceClassifier(8000, 512, _encoder(512, 8, 6), 10))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    return model, optimizer, F.cross_entropy, _tokens(8000, 256, classes=10)


class _VisionTransformer(nn.Module):
    """A ViT: 8x8 patches of a 128x128 image embedded by a strided convolution, a class token, an encoder."""

    def __init__(self, width: int = 384, heads: int = 6, layers: int = 6, classes: int = 100) -> None:
        super().__init__()
        self.patches = nn.Conv2d(3, width, kernel_size=8, stride=8)
        self.cls = nn.Parameter(torch.zeros(1, 1, width))
        self.position = nn.Parameter(torch.randn(1, 1 + (128 // 8) ** 2, width) * 0.02)
        self.encoder = _encoder(width, heads, layers)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, images: Tensor) -> Tensor:
        x = self.patches(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.position
        return self.head(self.norm(self.encoder(x)[:, 0]))


def vit(device: str = "cpu") -> Built:
    """A ViT-like image classifier (patch embedding and a six-layer encoder) with AdamW."""
    model = _seeded(device, _VisionTransformer)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    return model, optimizer, F.cross_entropy, _images(3, 128, 100)


def lstm(device: str = "cpu") -> Built:
    """A two-layer LSTM text classifier on 128 tokens with Adam (cuDNN's RNN on the GPU)."""
    model = _seeded(
        device,
        lambda: _SequenceClassifier(
            10000, 256, _Project(nn.LSTM(256, 512, num_layers=2, batch_first=True), 512, 256), 5
        ),
    )
    return model, torch.optim.Adam(model.parameters(), lr=1e-3), F.cross_entropy, _tokens(10000, 128, classes=5)


class _Project(nn.Module):
    """An LSTM whose outputs are projected back to the embedding width, so one head fits every body."""

    def __init__(self, rnn: nn.LSTM, hidden: int, width: int) -> None:
        super().__init__()
        self.rnn = rnn
        self.out = nn.Linear(hidden, width)

    def forward(self, x: Tensor) -> Tensor:
        return self.out(self.rnn(x)[0])


def _double_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
        nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
    )  # fmt: skip


class _UNet(nn.Module):
    """Three downsamplings, a bottleneck, and three upsamplings joined to the down path by skip connections."""

    def __init__(self, widths: tuple[int, ...] = (32, 64, 128, 256), classes: int = 4) -> None:
        super().__init__()
        self.down = nn.ModuleList()
        cin = 3
        for w in widths:
            self.down.append(_double_conv(cin, w))
            cin = w
        self.up = nn.ModuleList(nn.ConvTranspose2d(w, w // 2, 2, stride=2) for w in reversed(widths[1:]))
        self.merge = nn.ModuleList(_double_conv(w, w // 2) for w in reversed(widths[1:]))
        self.head = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x: Tensor) -> Tensor:
        skips = []
        for i, block in enumerate(self.down):
            x = block(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips[:-1]), strict=True):
            x = merge(torch.cat([up(x), skip], dim=1))
        return self.head(x)


def unet(device: str = "cpu") -> Built:
    """A U-Net-like segmenter of 128x128 images into 4 classes per pixel with Adam."""
    model = _seeded(device, _UNet)
    make = _batch_maker(
        lambda n, g: (torch.randn(n, 3, 128, 128, generator=g), torch.randint(4, (n, 128, 128), generator=g))
    )
    return model, torch.optim.Adam(model.parameters(), lr=1e-3), F.cross_entropy, make


class _Recommender(nn.Module):
    """One embedding table per categorical field (the bulk of the parameters), concatenated into an MLP."""

    def __init__(self, rows: int = 62_500, fields: int = 16, width: int = 128) -> None:
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(rows, width) for _ in range(fields))
        self.mlp = nn.Sequential(
            nn.Linear(fields * width, 1024), nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 1)
        )

    def forward(self, ids: Tensor) -> Tensor:
        x = torch.cat([table(ids[:, i]) for i, table in enumerate(self.tables)], dim=1)
        return self.mlp(x).squeeze(1)


def recommender(device: str = "cpu") -> Built:
    """An embedding-heavy click predictor (16 tables of 62,500 rows, 128 wide) with Adam and dense gradients."""
    model = _seeded(device, _Recommender)
    make = _batch_maker(
        lambda n, g: (torch.randint(62_500, (n, 16), generator=g), torch.randint(2, (n,), generator=g).float())
    )
    return model, torch.optim.Adam(model.parameters(), lr=1e-3), F.binary_cross_entropy_with_logits, make


class _DecoderBlock(nn.Module):
    """A pre-norm GPT block: causal self-attention through scaled_dot_product_attention, then an MLP."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: Tensor) -> Tensor:
        n, length, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(width, dim=2)
        q, k, v = (t.view(n, length, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).reshape(n, length, width))
        return x + self.mlp(self.norm2(x))


class _GPT(nn.Module):
    """A small GPT: token and position embeddings, decoder blocks, and an output layer tied to the embedding."""

    def __init__(self, vocab: int = 8192, width: int = 512, heads: int = 8, layers: int = 6, length: int = 256):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.randn(1, length, width) * 0.02)
        self.blocks = nn.Sequential(*(_DecoderBlock(width, heads) for _ in range(layers)))
        self.norm = nn.LayerNorm(width)

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.blocks(self.tokens(tokens) + self.position[:, : tokens.shape[1]])
        return self.norm(x) @ self.tokens.weight.t()


def _next_token_loss(logits: Tensor, target: Tensor) -> Tensor:
    return F.cross_entropy(logits.flatten(0, 1).float(), target.flatten())


def gpt_amp(device: str = "cpu") -> Built:
    """A small GPT-style decoder (6 blocks, 256 tokens) with AdamW, trained under bfloat16 autocast."""
    model = _seeded(device, _GPT)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    return model, optimizer, _next_token_loss, _tokens(8192, 256)


@dataclass(frozen=True)
class ReferenceModel:
    """A reference model: its builder, the kit's three batch sizes, and the estimate's variant it trains as."""

    name: str
    build: Callable[[str], Built]
    batch_sizes: tuple[int, int, int]
    # "amp_bf16": the forward and the loss run under torch.autocast(bfloat16), so the
    # estimate's amp_bf16 variant is the prediction to compare with.
    variant: str = "plain"

    @property
    def amp(self) -> bool:
        """Whether the step runs under bfloat16 autocast."""
        return self.variant == "amp_bf16"


REFERENCE_MODELS = (
    ReferenceModel("mlp", mlp, (1024, 4096, 16384)),
    ReferenceModel("resnet", resnet, (32, 128, 256)),
    ReferenceModel("transformer_encoder", transformer_encoder, (4, 16, 32)),
    ReferenceModel("vit", vit, (8, 16, 32)),
    ReferenceModel("lstm", lstm, (32, 128, 256)),
    ReferenceModel("unet", unet, (8, 32, 64)),
    ReferenceModel("recommender", recommender, (4096, 16384, 65536)),
    ReferenceModel("gpt_amp", gpt_amp, (8, 32, 64), variant="amp_bf16"),
)


def training_step(built: Built, batch: Batch, amp: bool = False) -> None:
    """One training step as the estimate predicts it: gradients set to None, forward, loss, backward, step."""
    model, optimizer, loss_fn, _ = built
    inputs, target = batch
    model.train()
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(inputs.device.type, dtype=torch.bfloat16, enabled=amp):
        loss = loss_fn(model(inputs), target)
    loss.backward()
    optimizer.step()


def evaluation_step(built: Built, batch: Batch, amp: bool = False) -> None:
    """One evaluation step: eval mode, no gradients, forward and loss; the model is put back in training mode."""
    model, _, loss_fn, _ = built
    inputs, target = batch
    model.eval()
    with torch.no_grad(), torch.autocast(inputs.device.type, dtype=torch.bfloat16, enabled=amp):
        loss_fn(model(inputs), target)
    model.train()
