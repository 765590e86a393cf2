//! A flit on a router port: up to 256 data bits plus the head/tail/vc sideband.

/// One flit. `data[0]` holds bits 63..0, `data[1]` bits 127..64, and so on;
/// words above the configured flit width are zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flit {
    /// Data bits, least significant word first.
    pub data: [u64; 4],
    /// First flit of a packet.
    pub head: bool,
    /// Last flit of a packet (a one-flit packet has both `head` and `tail`).
    pub tail: bool,
    /// Virtual channel on this link (class `vc / vcs_per_class`).
    pub vc: u8,
}

impl Flit {
    /// The low 128 bits, i.e. the header when this is the head flit of a 128/256-bit packet.
    #[inline]
    pub fn low128(&self) -> u128 {
        (self.data[1] as u128) << 64 | self.data[0] as u128
    }
}
