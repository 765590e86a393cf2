//! Pack/unpack logic for the header, footer and coordinates.

pub mod coords;
pub mod footer;
pub mod header;
