//! XML files as tool arguments: no panic, hang or entity expansion on any bytes. A document
//! that declares a DOCTYPE is always refused (so no entity is ever expanded).
#![no_main]

use libfuzzer_sys::fuzz_target;
use offload_formats::Format;
use offload_formats::inputs;

fuzz_target!(|data: &[u8]| {
    let parsed = inputs::parse(&mut std::io::Cursor::new(data), Format::Xml, false);
    if let Ok(text) = std::str::from_utf8(data)
        && text.contains("<!DOCTYPE")
        && parsed.is_ok()
    {
        // A DOCTYPE inside a comment, CDATA or a processing instruction is not a declaration.
        let outside_text = !text.contains("<!--")
            && !text.contains("<![CDATA[")
            && !text.match_indices("<?").any(|(i, _)| i > 0);
        assert!(!outside_text, "a DOCTYPE was accepted");
    }
});
