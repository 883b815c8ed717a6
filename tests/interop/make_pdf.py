"""PDFs with embedded images for Offload's tests, written by reportlab (a real PDF writer).

    make_pdf.py images OUT.pdf      page 1: text, a JPEG and an RGB image; page 2: text only;
                                    page 3: text and a grayscale image
    make_pdf.py many OUT.pdf N      one page with N small images
"""
import io
import sys

from PIL import Image
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas


def picture(w: int, h: int, mode: str = "RGB") -> Image.Image:
    img = Image.new(mode, (w, h))
    img.putdata([((x * 7) % 256, (y * 3) % 256, 128)[: len(mode)] if mode == "RGB" else (x + y) % 256
                 for y in range(h) for x in range(w)])
    return img


def jpeg(w: int, h: int) -> ImageReader:
    buf = io.BytesIO()
    picture(w, h).save(buf, "JPEG", quality=85)
    buf.seek(0)
    return ImageReader(buf)


def images(out: str) -> None:
    c = canvas.Canvas(out)
    c.drawString(72, 720, "Page one has a photo and a chart.")
    c.drawImage(jpeg(640, 480), 72, 400, width=320, height=240)
    c.drawImage(ImageReader(picture(200, 100)), 72, 200, width=200, height=100)
    c.showPage()
    c.drawString(72, 720, "Page two is text only.")
    c.showPage()
    c.drawString(72, 720, "Page three has a gray scan.")
    c.drawImage(ImageReader(picture(300, 300, "L")), 72, 300, width=300, height=300)
    c.showPage()
    c.save()


def many(out: str, n: int) -> None:
    c = canvas.Canvas(out)
    c.drawString(72, 800, f"A page with {n} images.")
    for i in range(n):
        # Distinct images (reportlab would share one drawn twice).
        img = Image.new("RGB", (8, 8), (i % 256, (i // 256) * 60, 7))
        c.drawImage(ImageReader(img), 20 + (i % 20) * 28, 40 + (i // 20) * 28, width=24, height=24)
    c.showPage()
    c.save()


if __name__ == "__main__":
    if sys.argv[1] == "images":
        images(sys.argv[2])
    else:
        many(sys.argv[2], int(sys.argv[3]))
