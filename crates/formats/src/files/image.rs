//! Images: format and dimensions from the header alone (`image` crate), and for `read_file` the
//! picture itself, downscaled and re-encoded (JPEG, or PNG when it has transparency) until it fits
//! the image budget. Decoding is bounded by the crate's memory limits.

use std::io::{BufReader, Cursor};

use image::{DynamicImage, ImageFormat, ImageReader, Limits};
use schemars::JsonSchema;
use serde::Serialize;

use super::reading::{ImageInfo, ReadAnswer};
use super::{FileError, Probe, Settings};

/// The longest side shown (models gain nothing from more).
const MAX_SIDE: u32 = 1568;
/// Memory the decoder may use.
const DECODE_LIMIT: u64 = 512 << 20;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImageSchema {
    pub width: u32,
    pub height: u32,
    pub mime_type: String,
}

fn reader(probe: &Probe, format: ImageFormat) -> ImageReader<BufReader<super::source::Cursor<'_>>> {
    let mut reader = ImageReader::with_format(BufReader::new(probe.file.reader()), format);
    let mut limits = Limits::default();
    limits.max_alloc = Some(DECODE_LIMIT);
    reader.limits(limits);
    reader
}

fn image_error(e: image::ImageError) -> FileError {
    match e {
        image::ImageError::IoError(io) => FileError::Io(io),
        image::ImageError::Limits(l) => {
            FileError::TooLarge(format!("the image is too large to decode: {l}"))
        }
        other => FileError::Parse(format!("not a readable image: {other}")),
    }
}

pub fn schema(probe: &Probe, format: ImageFormat) -> Result<ImageSchema, FileError> {
    let (width, height) = reader(probe, format)
        .into_dimensions()
        .map_err(image_error)?;
    Ok(ImageSchema {
        width,
        height,
        mime_type: format.to_mime_type().to_owned(),
    })
}

pub fn read(
    probe: Probe,
    format: ImageFormat,
    settings: &Settings,
) -> Result<ReadAnswer, FileError> {
    let picture = reader(&probe, format).decode().map_err(image_error)?;
    let (width, height) = (picture.width(), picture.height());
    let (bytes, mime, shown) = fit(picture, settings.image_budget)?;
    Ok(ReadAnswer {
        kind: "image".into(),
        image: Some(ImageInfo {
            format: format!("{format:?}").to_lowercase(),
            width,
            height,
            bytes: probe.size,
            shown_width: shown.0,
            shown_height: shown.1,
            shown_mime_type: mime.to_owned(),
            shown_bytes: bytes.len() as u64,
        }),
        images_data: vec![(bytes, mime)],
        ..ReadAnswer::default()
    })
}

/// The encoded bytes, their MIME type and the size shown.
pub(super) type Fitted = (Vec<u8>, &'static str, (u32, u32));

/// Scales `picture` down and encodes it until the bytes fit `budget`.
pub(super) fn fit(picture: DynamicImage, budget: usize) -> Result<Fitted, FileError> {
    let alpha = picture.color().has_alpha();
    let (format, mime) = if alpha {
        (ImageFormat::Png, "image/png")
    } else {
        (ImageFormat::Jpeg, "image/jpeg")
    };
    let mut side = MAX_SIDE.min(picture.width().max(picture.height())).max(1);
    loop {
        let scaled = if picture.width().max(picture.height()) > side {
            picture.thumbnail(side, side)
        } else {
            picture.clone()
        };
        let scaled = if alpha {
            scaled
        } else {
            DynamicImage::ImageRgb8(scaled.to_rgb8())
        };
        let mut out = Cursor::new(Vec::new());
        scaled.write_to(&mut out, format).map_err(image_error)?;
        let bytes = out.into_inner();
        if bytes.len() <= budget || side <= 16 {
            return Ok((bytes, mime, (scaled.width(), scaled.height())));
        }
        side = side * 3 / 4;
    }
}
