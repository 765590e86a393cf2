//! `footer_pack` / `footer_unpack`: the 128-bit footer flit ↔ fields, with
//! its CRC-8.
//!
//! Layout and CRC-8: `exanet_sim::packet::footer` (MSB first: payload_crc
//! 32 · crc8 8 · user 12 · ttl 15 · seq 14 · notify · last · first ·
//! flags 8 · src 22 · txid 14; crc8 = CRC-8/I-432-1 of bits `[87:0]`). Both
//! blocks are combinational (latency 0).
//!
//! Ports:
//! - [`FooterPack`] (`exanet_footer_pack`): `payload_crc[32]`, `user[12]`,
//!   `ttl[15]`, `seq[14]`, `notify`, `last`, `first`, `flags[8]`,
//!   `src[22]`, `txid[14]` → `word[128]` (CRC-8 computed)
//! - [`FooterUnpack`] (`exanet_footer_unpack`): `word[128]` → the same
//!   fields, `crc8[8]` as received and `crc8_ok` (it matches bits `[87:0]`).
//!
//! No parameters. The CRC-8 is an affine GF(2) map of the 88 covered bits
//! (its constant is the CRC of all zeros, 0x55), computed at elaboration
//! into an [`XorMatrix`]: 8 XOR trees. Packing uses generated leaves
//! (rust-hdl cannot widen without a WIDTH lint warning, see
//! `super::coords`); unpacking is rust-hdl `get_bits` at typed offsets.

use super::coords::{bits_of, concat_verilog, offset};
use crate::common::crc32::XorMatrix;
use crate::emit::{emit, Emitted};
use anyhow::Result;
use exanet_sim::packet::footer::{
    footer_crc8, CRC8, FIRST, FLAGS, FOOTER_CRC8_COVERED_BITS, LAST, NOTIFY, PAYLOAD_CRC, SEQ, SRC,
    TTL, TXID, USER,
};
use rust_hdl::prelude::*;

// The Bits<N> widths below are the field table's; a change there must fail here.
const _: () = assert!(PAYLOAD_CRC.width == 32 && PAYLOAD_CRC.offset == 96);
const _: () = assert!(CRC8.width == 8 && CRC8.offset == 88 && FOOTER_CRC8_COVERED_BITS == 88);
const _: () = assert!(USER.width == 12 && TTL.width == 15 && SEQ.width == 14);
const _: () = assert!(NOTIFY.width == 1 && LAST.width == 1 && FIRST.width == 1);
const _: () = assert!(FLAGS.width == 8 && SRC.width == 22 && TXID.width == 14);
const _: () = assert!(USER.offset == 76 && TXID.offset == 0);

/// The CRC-8 of the 88 covered bits as an affine XOR matrix.
pub fn crc8_matrix() -> Result<XorMatrix<88, 8>> {
    let c0 = footer_crc8(0);
    Ok(
        XorMatrix::from_columns(|i, _| (footer_crc8(1u128 << i) ^ c0) as u128)?
            .with_constant(c0 as u128),
    )
}

/// Fields → footer bits `[87:0]` (everything the CRC-8 covers).
#[derive(LogicBlock, Default)]
pub struct FooterLowPack {
    /// User bits.
    pub user: Signal<In, Bits<12>>,
    /// Time to live.
    pub ttl: Signal<In, Bits<15>>,
    /// Sequence number.
    pub seq: Signal<In, Bits<14>>,
    /// Notify.
    pub notify: Signal<In, bool>,
    /// Last packet of a transfer.
    pub last: Signal<In, bool>,
    /// First packet of a transfer.
    pub first: Signal<In, bool>,
    /// Flags.
    pub flags: Signal<In, Bits<8>>,
    /// Source coordinates.
    pub src: Signal<In, Bits<22>>,
    /// Transaction id.
    pub txid: Signal<In, Bits<14>>,
    /// Footer bits `[87:0]`.
    pub low: Signal<Out, Bits<88>>,
}

impl Logic for FooterLowPack {
    fn update(&mut self) {
        let mut w = 0u128;
        w = USER.put(w, self.user.val().to_u64());
        w = TTL.put(w, self.ttl.val().to_u64());
        w = SEQ.put(w, self.seq.val().to_u64());
        w = NOTIFY.put(w, self.notify.val() as u64);
        w = LAST.put(w, self.last.val() as u64);
        w = FIRST.put(w, self.first.val() as u64);
        w = FLAGS.put(w, self.flags.val().to_u64());
        w = SRC.put(w, self.src.val().to_u64());
        w = TXID.put(w, self.txid.val().to_u64());
        self.low.next = bits_of(w);
    }

    fn connect(&mut self) {
        self.low.connect();
    }

    fn hdl(&self) -> Verilog {
        concat_verilog(
            "low",
            &[
                "user", "ttl", "seq", "notify", "last", "first", "flags", "src", "txid",
            ],
        )
    }
}

/// `{payload_crc, crc8, low}`: the footer word.
#[derive(LogicBlock, Default)]
pub struct FooterWordPack {
    /// Payload CRC-32.
    pub payload_crc: Signal<In, Bits<32>>,
    /// Footer CRC-8.
    pub crc8: Signal<In, Bits<8>>,
    /// Footer bits `[87:0]`.
    pub low: Signal<In, Bits<88>>,
    /// The footer word.
    pub word: Signal<Out, Bits<128>>,
}

impl Logic for FooterWordPack {
    fn update(&mut self) {
        let w = self.low.val().to_u128()
            | (self.crc8.val().to_u128() << CRC8.offset)
            | (self.payload_crc.val().to_u128() << PAYLOAD_CRC.offset);
        self.word.next = bits_of(w);
    }

    fn connect(&mut self) {
        self.word.connect();
    }

    fn hdl(&self) -> Verilog {
        concat_verilog("word", &["payload_crc", "crc8", "low"])
    }
}

/// Footer fields → footer word with CRC-8.
#[derive(LogicBlock)]
pub struct FooterPack {
    /// Payload CRC-32.
    pub payload_crc: Signal<In, Bits<32>>,
    /// User bits.
    pub user: Signal<In, Bits<12>>,
    /// Time to live.
    pub ttl: Signal<In, Bits<15>>,
    /// Sequence number.
    pub seq: Signal<In, Bits<14>>,
    /// Notify.
    pub notify: Signal<In, bool>,
    /// Last packet of a transfer.
    pub last: Signal<In, bool>,
    /// First packet of a transfer.
    pub first: Signal<In, bool>,
    /// Flags.
    pub flags: Signal<In, Bits<8>>,
    /// Source coordinates.
    pub src: Signal<In, Bits<22>>,
    /// Transaction id.
    pub txid: Signal<In, Bits<14>>,
    /// The footer word.
    pub word: Signal<Out, Bits<128>>,
    low_pack: FooterLowPack,
    crc8_map: XorMatrix<88, 8>,
    word_pack: FooterWordPack,
}

impl FooterPack {
    /// The packer.
    pub fn new() -> Result<Self> {
        Ok(FooterPack {
            payload_crc: Default::default(),
            user: Default::default(),
            ttl: Default::default(),
            seq: Default::default(),
            notify: Default::default(),
            last: Default::default(),
            first: Default::default(),
            flags: Default::default(),
            src: Default::default(),
            txid: Default::default(),
            word: Default::default(),
            low_pack: Default::default(),
            crc8_map: crc8_matrix()?,
            word_pack: Default::default(),
        })
    }
}

impl Logic for FooterPack {
    #[hdl_gen]
    fn update(&mut self) {
        self.low_pack.user.next = self.user.val();
        self.low_pack.ttl.next = self.ttl.val();
        self.low_pack.seq.next = self.seq.val();
        self.low_pack.notify.next = self.notify.val();
        self.low_pack.last.next = self.last.val();
        self.low_pack.first.next = self.first.val();
        self.low_pack.flags.next = self.flags.val();
        self.low_pack.src.next = self.src.val();
        self.low_pack.txid.next = self.txid.val();
        self.crc8_map.x.next = self.low_pack.low.val();
        self.word_pack.payload_crc.next = self.payload_crc.val();
        self.word_pack.crc8.next = self.crc8_map.y.val();
        self.word_pack.low.next = self.low_pack.low.val();
        self.word.next = self.word_pack.word.val();
    }
}

/// Footer word → fields and CRC-8 check.
#[derive(LogicBlock)]
pub struct FooterUnpack {
    /// The footer word as received.
    pub word: Signal<In, Bits<128>>,
    /// Payload CRC-32.
    pub payload_crc: Signal<Out, Bits<32>>,
    /// CRC-8 as received.
    pub crc8: Signal<Out, Bits<8>>,
    /// The CRC-8 matches bits `[87:0]`.
    pub crc8_ok: Signal<Out, bool>,
    /// User bits.
    pub user: Signal<Out, Bits<12>>,
    /// Time to live.
    pub ttl: Signal<Out, Bits<15>>,
    /// Sequence number.
    pub seq: Signal<Out, Bits<14>>,
    /// Notify.
    pub notify: Signal<Out, bool>,
    /// Last packet of a transfer.
    pub last: Signal<Out, bool>,
    /// First packet of a transfer.
    pub first: Signal<Out, bool>,
    /// Flags.
    pub flags: Signal<Out, Bits<8>>,
    /// Source coordinates.
    pub src: Signal<Out, Bits<22>>,
    /// Transaction id.
    pub txid: Signal<Out, Bits<14>>,
    crc8_map: XorMatrix<88, 8>,
    received_crc8: Signal<Local, Bits<8>>,
    // Offsets: 7 bits index the 128-bit word.
    off_low: Constant<Bits<7>>,
    off_payload_crc: Constant<Bits<7>>,
    off_crc8: Constant<Bits<7>>,
    off_user: Constant<Bits<7>>,
    off_ttl: Constant<Bits<7>>,
    off_seq: Constant<Bits<7>>,
    off_notify: Constant<Bits<7>>,
    off_last: Constant<Bits<7>>,
    off_first: Constant<Bits<7>>,
    off_flags: Constant<Bits<7>>,
    off_src: Constant<Bits<7>>,
    off_txid: Constant<Bits<7>>,
}

impl FooterUnpack {
    /// The unpacker.
    pub fn new() -> Result<Self> {
        Ok(FooterUnpack {
            word: Default::default(),
            payload_crc: Default::default(),
            crc8: Default::default(),
            crc8_ok: Default::default(),
            user: Default::default(),
            ttl: Default::default(),
            seq: Default::default(),
            notify: Default::default(),
            last: Default::default(),
            first: Default::default(),
            flags: Default::default(),
            src: Default::default(),
            txid: Default::default(),
            crc8_map: crc8_matrix()?,
            received_crc8: Default::default(),
            off_low: Constant::new(bits(0)),
            off_payload_crc: offset(&PAYLOAD_CRC),
            off_crc8: offset(&CRC8),
            off_user: offset(&USER),
            off_ttl: offset(&TTL),
            off_seq: offset(&SEQ),
            off_notify: offset(&NOTIFY),
            off_last: offset(&LAST),
            off_first: offset(&FIRST),
            off_flags: offset(&FLAGS),
            off_src: offset(&SRC),
            off_txid: offset(&TXID),
        })
    }
}

impl Logic for FooterUnpack {
    #[hdl_gen]
    fn update(&mut self) {
        self.crc8_map.x.next = self.word.val().get_bits::<88>(self.off_low.val().index());
        self.received_crc8.next = self.word.val().get_bits::<8>(self.off_crc8.val().index());
        self.crc8.next = self.received_crc8.val();
        self.crc8_ok.next = self.crc8_map.y.val() == self.received_crc8.val();
        self.payload_crc.next = self
            .word
            .val()
            .get_bits::<32>(self.off_payload_crc.val().index());
        self.user.next = self.word.val().get_bits::<12>(self.off_user.val().index());
        self.ttl.next = self.word.val().get_bits::<15>(self.off_ttl.val().index());
        self.seq.next = self.word.val().get_bits::<14>(self.off_seq.val().index());
        self.notify.next = self.word.val().get_bit(self.off_notify.val().index());
        self.last.next = self.word.val().get_bit(self.off_last.val().index());
        self.first.next = self.word.val().get_bit(self.off_first.val().index());
        self.flags.next = self.word.val().get_bits::<8>(self.off_flags.val().index());
        self.src.next = self.word.val().get_bits::<22>(self.off_src.val().index());
        self.txid.next = self.word.val().get_bits::<14>(self.off_txid.val().index());
    }
}

/// Emit [`FooterPack`] as `exanet_footer_pack`.
pub fn emit_footer_pack() -> Result<Emitted> {
    emit(&mut FooterPack::new()?, "exanet_footer_pack")
}

/// Emit [`FooterUnpack`] as `exanet_footer_unpack`.
pub fn emit_footer_unpack() -> Result<Emitted> {
    emit(&mut FooterUnpack::new()?, "exanet_footer_unpack")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;
    use exanet_sim::rng::Rng;

    #[test]
    fn emits_lint_clean_verilog() {
        let p = emit_footer_pack().unwrap();
        let t = p.text();
        assert!(t.contains("word = {payload_crc, crc8, low};"), "{t}");
        assert!(t.contains("low = {user, ttl, seq, notify, last, first, flags, src, txid};"));
        assert_lint_clean(&p);
        let u = emit_footer_unpack().unwrap();
        let top = &u.modules.last().unwrap().1;
        for (port, w) in [("word", 128), ("payload_crc", 32), ("crc8", 8), ("src", 22)] {
            assert!(top.contains(&format!("[{}:0] {port};", w - 1)), "{port}");
        }
        assert!(top.contains("notify = word[off_notify];"), "{top}");
        assert_lint_clean(&u);
    }

    /// The CRC-8 matrix, applied in Rust as the RTL does, equals the golden CRC-8.
    #[test]
    fn crc8_matrix_matches_the_golden_crc() {
        let m = crc8_matrix().unwrap();
        let c0 = footer_crc8(0);
        let mut rng = Rng::new(8);
        for _ in 0..5000 {
            let w = rng.next_u128() & ((1u128 << 88) - 1);
            let mut c = 0u8;
            for (o, row) in m.rows().iter().enumerate() {
                let b = row.iter().fold(c0 >> o & 1, |b, &i| b ^ (w >> i & 1) as u8);
                c |= b << o;
            }
            assert_eq!(c, footer_crc8(w));
        }
    }
}
