"""`--image=file=F,triple=T,arch=A,kind=K[,key=value...]` arguments, read as llvm-offload-binary reads them.

Differences, each to avoid an image that silently fails later: `kind`, `triple` and `arch` are
required; the image kind comes from the content (an explicit `image-kind=` overrides it) instead of
the file name; `file`, `kind`, `triple`, `arch` and `image-kind` may be given once.
"""

from __future__ import annotations

from dataclasses import dataclass

from offload.errors import OffloadError
from offload.fsutil import read_input
from offload.packager.detect import detect_image_kind
from offload.packager.llvm_order import dense_map_order
from offload.packager.model import ImageKind, OffloadImage

IMAGE_KIND_KEY = "image-kind"
_SINGLE_KEYS = ("file", "kind", "triple", "arch", IMAGE_KIND_KEY)
_NOT_STRINGS = ("file", "kind", IMAGE_KIND_KEY)


@dataclass(frozen=True)
class ImageSpec:
    file: str
    kind: str
    image_kind: str | None
    strings: dict[str, str]  # in the order llvm-offload-binary stores them


def parse_image_spec(spec: str) -> ImageSpec:
    args: dict[str, str] = {}
    seen: list[str] = []
    for arg in spec.split(","):
        key, _, value = arg.partition("=")
        if not key:
            raise OffloadError(f"--image '{spec}': empty key in '{arg}'")
        if key in args:
            if key in _SINGLE_KEYS:
                raise OffloadError(f"--image '{spec}': '{key}' given twice")
            args[key] = args[key] + "," + value  # llvm-offload-binary joins repeated keys with ','
        else:
            args[key] = value
            seen.append(key)
    for required in ("file", "kind", "triple", "arch"):
        if not args.get(required):
            raise OffloadError(f"--image '{spec}': missing {required}=")
    order = [
        k.decode("utf-8", "surrogateescape")
        for k in dense_map_order([k.encode("utf-8", "surrogateescape") for k in seen])
    ]
    return ImageSpec(
        file=args["file"],
        kind=args["kind"],
        image_kind=args.get(IMAGE_KIND_KEY),
        strings={k: args[k] for k in order if k not in _NOT_STRINGS},
    )


def image_kind_from_name(name: str) -> ImageKind:
    try:
        kind = ImageKind[name.upper()]
    except KeyError:
        kind = ImageKind.NONE
    if kind == ImageKind.NONE:
        known = ", ".join(k.name.lower() for k in ImageKind if k != ImageKind.NONE)
        raise OffloadError(f"unknown image kind '{name}' (expected one of: {known})")
    return kind


def build_image(spec: ImageSpec, offload_kind_value) -> OffloadImage:
    """Read the spec's file and make its image; `offload_kind_value` maps "cuda"/"hip"/... to a value."""
    kind_value = offload_kind_value(spec.kind)
    data = read_input(spec.file)
    if spec.image_kind is not None:
        image_kind = image_kind_from_name(spec.image_kind)
    else:
        try:
            image_kind = detect_image_kind(data)
        except OffloadError as e:
            raise OffloadError(f"'{spec.file}': {e.message}") from None
    return OffloadImage(int(image_kind), kind_value, 0, dict(spec.strings), data)
