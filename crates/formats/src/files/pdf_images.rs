//! The images embedded in PDF pages: counted per page for `get_file_schema`, and for
//! `read_file` decoded, downscaled and re-encoded (the image tools' `fit`) — at most a few per
//! call, the rest named in a note. This runs where the PDF text is extracted (the `offload
//! pdf-text` child, killed at the deadline), so a PDF with hostile images stops there too.
//!
//! Shown: JPEG (`DCTDecode`, after any filters before it) and 8-bit gray, RGB or CMYK samples
//! (raw, Flate, LZW or ASCII85). Not shown, but counted: JPEG 2000, JBIG2, CCITT fax, indexed
//! and other colour spaces, masks' own pixels.

use base64::Engine as _;
use image::{DynamicImage, ImageFormat};
use lopdf::{Document, Object, ObjectId};
use serde::{Deserialize, Serialize};

/// Images shown in one `read_file` answer.
pub const PER_CALL: u32 = 3;
/// Encoded bytes of each shown image (three fit the answer's image budget).
const EACH: usize = 24 * 1024;
/// The most pixels decoded for one image.
const MAX_PIXELS: i64 = 40_000_000;

/// What one page's images gave.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct PageImages {
    pub found: u32,
    pub shown: Vec<Shown>,
    /// Why each image not shown was left out (`640x480: JPXDecode images are not shown`).
    pub left_out: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Shown {
    pub mime: String,
    /// Base64 of the encoded image.
    pub data: String,
    pub width: u32,
    pub height: u32,
}

/// Images on each page (in page order).
pub fn counts(doc: &Document) -> Vec<u32> {
    doc.get_pages()
        .values()
        .map(|&id| doc.get_page_images(id).map_or(0, |i| i.len() as u32))
        .collect()
}

/// The images of `page`, decoding at most `*left` of them (and counting those down).
pub fn page(doc: &Document, page: ObjectId, left: &mut u32) -> PageImages {
    let images = doc.get_page_images(page).unwrap_or_default();
    let mut out = PageImages {
        found: images.len() as u32,
        ..PageImages::default()
    };
    for img in &images {
        let size = format!("{}x{}", img.width, img.height);
        if *left == 0 {
            out.left_out.push(format!(
                "{size}: over the {PER_CALL} images one answer shows"
            ));
            continue;
        }
        match decode(
            doc,
            img.id,
            img.width,
            img.height,
            img.color_space.as_deref(),
        )
        .and_then(|picture| super::image::fit(picture, EACH).map_err(|e| e.to_string()))
        {
            Ok((bytes, mime, (width, height))) => {
                *left -= 1;
                out.shown.push(Shown {
                    mime: mime.to_owned(),
                    data: base64::engine::general_purpose::STANDARD.encode(bytes),
                    width,
                    height,
                });
            }
            Err(why) => out.left_out.push(format!("{size}: {why}")),
        }
    }
    out
}

const OPAQUE: [&[u8]; 4] = [
    b"DCTDecode",
    b"JPXDecode",
    b"JBIG2Decode",
    b"CCITTFaxDecode",
];

fn decode(
    doc: &Document,
    id: ObjectId,
    width: i64,
    height: i64,
    color_space: Option<&str>,
) -> Result<DynamicImage, String> {
    if width <= 0 || height <= 0 || width.saturating_mul(height) > MAX_PIXELS {
        return Err("too large to show".into());
    }
    let stream = doc
        .get_object(id)
        .and_then(Object::as_stream)
        .map_err(|e| format!("unreadable ({e})"))?;
    let filters: Vec<Vec<u8>> = stream
        .filters()
        .map(|f| f.into_iter().map(<[u8]>::to_vec).collect())
        .unwrap_or_default();
    // The filters before an image codec are undone here; the codec's data is decoded below.
    let (before, codec) = match filters.split_last() {
        Some((last, before)) if OPAQUE.contains(&last.as_slice()) => {
            (before, Some(last.as_slice()))
        }
        _ => (filters.as_slice(), None),
    };
    let data = if before.is_empty() {
        stream.content.clone()
    } else {
        let mut undone = stream.clone();
        undone.dict.set(
            "Filter",
            Object::Array(before.iter().map(|f| Object::Name(f.clone())).collect()),
        );
        undone
            .decompressed_content()
            .map_err(|e| format!("its data could not be decoded ({e})"))?
    };
    match codec {
        Some(b"DCTDecode") => {
            let mut reader =
                image::ImageReader::with_format(std::io::Cursor::new(data), ImageFormat::Jpeg);
            let mut limits = image::Limits::default();
            limits.max_alloc = Some(512 << 20);
            reader.limits(limits);
            reader
                .decode()
                .map_err(|e| format!("not a readable JPEG ({e})"))
        }
        Some(other) => Err(format!(
            "{} images are not shown",
            String::from_utf8_lossy(other)
        )),
        None => raw(doc, stream, data, width as u32, height as u32, color_space),
    }
}

/// 8-bit samples in a gray, RGB or CMYK colour space.
fn raw(
    doc: &Document,
    stream: &lopdf::Stream,
    data: Vec<u8>,
    width: u32,
    height: u32,
    color_space: Option<&str>,
) -> Result<DynamicImage, String> {
    let bits = stream
        .dict
        .get(b"BitsPerComponent")
        .and_then(Object::as_i64)
        .unwrap_or(8);
    if bits != 8 {
        return Err(format!("{bits}-bit samples are not shown"));
    }
    let components = match color_space {
        Some("DeviceGray" | "CalGray") => 1,
        Some("DeviceRGB" | "CalRGB") => 3,
        Some("DeviceCMYK") => 4,
        Some("ICCBased") => icc_components(doc, stream).ok_or("an unknown ICC profile")?,
        Some(other) => return Err(format!("{other} colours are not shown")),
        None => return Err("no colour space".into()),
    };
    let pixels = width as usize * height as usize;
    if data.len() < pixels * components {
        return Err("its samples are cut short".into());
    }
    let data = &data[..pixels * components];
    let picture = match components {
        1 => image::GrayImage::from_raw(width, height, data.to_vec()).map(DynamicImage::ImageLuma8),
        3 => image::RgbImage::from_raw(width, height, data.to_vec()).map(DynamicImage::ImageRgb8),
        _ => {
            let rgb = data
                .chunks_exact(4)
                .flat_map(|p| {
                    let k = 255 - u32::from(p[3]);
                    [0, 1, 2].map(|i| ((255 - u32::from(p[i])) * k / 255) as u8)
                })
                .collect();
            image::RgbImage::from_raw(width, height, rgb).map(DynamicImage::ImageRgb8)
        }
    };
    picture.ok_or_else(|| "its samples do not match its size".into())
}

/// `N` of an `[/ICCBased stream]` colour space: 1, 3 or 4.
fn icc_components(doc: &Document, stream: &lopdf::Stream) -> Option<usize> {
    let space = stream.dict.get(b"ColorSpace").ok()?;
    let space = match space {
        Object::Reference(id) => doc.get_object(*id).ok()?,
        other => other,
    };
    let profile = space.as_array().ok()?.get(1)?;
    let profile = match profile {
        Object::Reference(id) => doc.get_object(*id).ok()?,
        other => other,
    };
    let n = profile
        .as_stream()
        .ok()?
        .dict
        .get(b"N")
        .ok()?
        .as_i64()
        .ok()?;
    matches!(n, 1 | 3 | 4).then_some(n as usize)
}
