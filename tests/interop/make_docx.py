"""Word documents for Offload's .docx tests, written by python-docx (a real .docx writer), and
a zip bomb shaped like one.

    make_docx.py report OUT.docx     headings, paragraphs, a bulleted list, a table
    make_docx.py bomb OUT.docx MIB   word/document.xml decompresses to MIB MiB
    make_docx.py strip IN OUT        IN without its word/document.xml (a zip, no Word document)
"""
import sys
import zipfile

import docx


def report(out: str) -> None:
    d = docx.Document()
    d.core_properties.title = "Quarterly report"
    d.add_heading("Quarterly report", level=0)
    d.add_paragraph("Sales & costs grew in every region.")
    d.add_heading("Regions", level=1)
    for region in ["North", "South"]:
        d.add_paragraph(f"{region} met its target", style="List Bullet")
    table = d.add_table(rows=1, cols=3)
    for cell, text in zip(table.rows[0].cells, ["Region", "Q1", "Q2"]):
        cell.text = text
    for row in [("North", "10", "12"), ("South", "7", "9|10")]:
        cells = table.add_row().cells
        for cell, text in zip(cells, row):
            cell.text = text
    d.add_heading("Details", level=2)
    for i in range(300):
        d.add_paragraph(f"Paragraph {i}: " + "words " * 20)
    d.add_heading("Appendix", level=1)
    d.add_paragraph("The end.")
    d.save(out)


def bomb(out: str, mib: int) -> None:
    chunk = b"<w:p><w:r><w:t>" + b"a" * 4000 + b"</w:t></w:r></w:p>"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        with z.open("word/document.xml", "w", force_zip64=True) as w:
            w.write(b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>')
            written = 0
            while written < mib << 20:
                w.write(chunk * 256)
                written += len(chunk) * 256
            w.write(b"</w:body></w:document>")


def strip(src: str, out: str) -> None:
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(out, "w") as w:
        for info in z.infolist():
            if info.filename != "word/document.xml":
                w.writestr(info, z.read(info))


if __name__ == "__main__":
    if sys.argv[1] == "report":
        report(sys.argv[2])
    elif sys.argv[1] == "strip":
        strip(sys.argv[2], sys.argv[3])
    else:
        bomb(sys.argv[2], int(sys.argv[3]))
