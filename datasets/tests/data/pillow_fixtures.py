"""Writes pillow_fixtures.json: what Pillow computes for the images the tests rebuild.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install pillow
    /tmp/venv/bin/pip install pillow numpy
    /tmp/venv/bin/python datasets/tests/data/pillow_fixtures.py

The input images are a formula (the tests compute the same one): channel c of pixel
(x, y) is (x·37 + y·91 + c·53 + x·y·7) mod 256. Resample.c's arithmetic for 8-bit images
is the same in the Pillow that made this file as in the suite's 6.2.0.
"""
import io
import json
import os

import numpy as np
import PIL
from PIL import Image, ImageEnhance


def formula(w, h):
    data = bytes(
        (x * 37 + y * 91 + c * 53 + x * y * 7) % 256
        for y in range(h)
        for x in range(w)
        for c in range(3)
    )
    return Image.frombytes("RGB", (w, h), data)


FILTERS = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "lanczos": Image.LANCZOS}
CASES = [
    # (source w, h), (output w, h), filter
    ((13, 11), (5, 4), "bilinear"),
    ((13, 11), (7, 17), "bilinear"),
    ((13, 11), (4, 3), "lanczos"),
    ((13, 11), (20, 6), "bicubic"),
    ((97, 61), (31, 23), "bilinear"),
    ((50, 40), (50, 9), "bilinear"),
]

resizes = []
for (sw, sh), (ow, oh), f in CASES:
    out = formula(sw, sh).resize((ow, oh), FILTERS[f])
    resizes.append({"source": [sw, sh], "output": [ow, oh], "filter": f, "pixels": list(out.tobytes())})

# A JPEG as PIL saves it by default, and PIL's decoding of it.
buf = io.BytesIO()
formula(40, 24).save(buf, format="JPEG")
jpeg = buf.getvalue()
decoded = Image.open(io.BytesIO(jpeg)).convert("RGB")

# Sides that are multiples of 16: no MCU lies partly outside, so the scan is comparable
# byte for byte (libjpeg fills the blocks wholly outside the image with zero AC and the
# previous DC, where jpeg-encoder transforms the repeated edge).
buf16 = io.BytesIO()
formula(48, 32).save(buf16, format="JPEG")

# Colour operations whose C is the same in this Pillow as in 6.2.0 (ConvertYCbCr.c's
# tables, rgb2hsv/hsv2rgb, Blend.c): YCbCr's Y, HSV both ways, Brightness (a blend with
# black), and torchvision 0.4's adjust_hue. Not Contrast or Color: they go through
# RGB -> L, which rounds since Pillow 9 and truncated in 6.2.
src = formula(13, 11)
hsv = src.convert("HSV")


def hue(img, factor):
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    # np.uint8 of a negative float: truncated, then its low byte (NumPy 1.17 on x86-64).
    np_h += np.uint8(int(factor * 255) % 256)
    return Image.merge("HSV", (Image.fromarray(np_h, "L"), s, v)).convert("RGB")


colour = {
    "source": [13, 11],
    "y": list(src.convert("YCbCr").split()[0].tobytes()),
    "hsv": list(hsv.tobytes()),
    "hsv_to_rgb": list(hsv.convert("RGB").tobytes()),
    "brightness": {str(f): list(ImageEnhance.Brightness(src).enhance(f).tobytes()) for f in (0.875, 1.125)},
    "hue": {str(f): list(hue(src, f).tobytes()) for f in (0.05, -0.05)},
}

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "pillow_fixtures.json"), "w") as f:
    json.dump(
        {
            "pillow": PIL.__version__,
            "resizes": resizes,
            "jpeg": {"size": [40, 24], "bytes": list(jpeg), "pillow_rgb": list(decoded.tobytes())},
            "jpeg16": {"size": [48, 32], "bytes": list(buf16.getvalue())},
            "colour": colour,
        },
        f,
    )
    f.write("\n")
