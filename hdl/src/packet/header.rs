//! `header_pack` / `header_unpack`: the 128-bit header flit ↔ fields,
//! with its SECDED code.
//!
//! Layout and code: `exanet_sim::packet::header` (MSB first: ecc 16 ·
//! fpga_offset 2 · path 3 · reserved 3 · vaddr 42 · size 14 · ptype 5 ·
//! dest 22 · pdid 16 · vc 5; ecc\[7:0\] = SECDED(112 bits \[111:0\]),
//! ecc\[15:8\] reserved zero). Both blocks are combinational (latency 0).
//!
//! Ports:
//! - [`HeaderPack`] (`exanet_header_pack`): `fpga_offset[2]`, `path[3]`,
//!   `reserved[3]`, `vaddr[42]`, `size[14]`, `ptype[5]`, `dest[22]`,
//!   `pdid[16]`, `vc[5]` → `word[128]` (check bits computed, ecc\[15:8\] = 0)
//! - [`HeaderUnpack`] (`exanet_header_unpack`): `word[128]` → the same
//!   fields after single-error correction, `ecc_reserved[8]` (ecc\[15:8\] as
//!   received, not protected), `single_err` (one bit was flipped and is
//!   corrected), `double_err` (uncorrectable: fields not trustworthy),
//!   `ptype_known` (the corrected type code is a known
//!   `exanet_sim::packet::header::PacketType`).
//!
//! No parameters. The router and NI instantiate these blocks; `dest` is
//! packed/unpacked with `super::coords`.
//!
//! Structure: packing is two generated leaves (fields → 112-bit body;
//! `{8'h00, check, body}` → word) around a [`SecdedEncoder`] — rust-hdl
//! cannot widen a value without a WIDTH lint warning (see
//! `super::coords`). Unpacking is rust-hdl: a [`SecdedDecoder`] on
//! `word[119:0]`, then `get_bits` at typed offsets.

use super::coords::{bits_of, concat_verilog, offset, CoordsPack, CoordsUnpack};
use super::footer::{FooterPack, FooterUnpack};
use crate::common::secded::{SecdedDecoder, SecdedEncoder};
use crate::emit::{emit, Emitted};
use anyhow::Result;
use exanet_sim::packet::header::{
    PacketType, DEST, ECC, FPGA_OFFSET, PATH, PDID, PTYPE, RESERVED, SIZE, VADDR, VC,
};
use rust_hdl::prelude::*;

// The Bits<N> widths below are the field table's; a change there must fail here.
const _: () = assert!(ECC.width == 16 && ECC.offset == 112);
const _: () = assert!(FPGA_OFFSET.width == 2 && PATH.width == 3 && RESERVED.width == 3);
const _: () = assert!(VADDR.width == 42 && SIZE.width == 14 && PTYPE.width == 5);
const _: () = assert!(DEST.width == 22 && PDID.width == 16 && VC.width == 5);
const _: () = assert!(FPGA_OFFSET.offset == 110 && VC.offset == 0);

/// Fields → the 112 protected bits.
#[derive(LogicBlock, Default)]
pub struct HeaderBodyPack {
    /// FPGA offset.
    pub fpga_offset: Signal<In, Bits<2>>,
    /// Path.
    pub path: Signal<In, Bits<3>>,
    /// Reserved.
    pub reserved: Signal<In, Bits<3>>,
    /// Destination virtual address.
    pub vaddr: Signal<In, Bits<42>>,
    /// Size in bytes.
    pub size: Signal<In, Bits<14>>,
    /// Packet type code.
    pub ptype: Signal<In, Bits<5>>,
    /// Destination coordinates.
    pub dest: Signal<In, Bits<22>>,
    /// Protection domain id.
    pub pdid: Signal<In, Bits<16>>,
    /// Virtual channel.
    pub vc: Signal<In, Bits<5>>,
    /// Header bits \[111:0\].
    pub body: Signal<Out, Bits<112>>,
}

impl Logic for HeaderBodyPack {
    fn update(&mut self) {
        let mut w = 0u128;
        w = FPGA_OFFSET.put(w, self.fpga_offset.val().to_u64());
        w = PATH.put(w, self.path.val().to_u64());
        w = RESERVED.put(w, self.reserved.val().to_u64());
        w = VADDR.put(w, self.vaddr.val().to_u64());
        w = SIZE.put(w, self.size.val().to_u64());
        w = PTYPE.put(w, self.ptype.val().to_u64());
        w = DEST.put(w, self.dest.val().to_u64());
        w = PDID.put(w, self.pdid.val().to_u64());
        w = VC.put(w, self.vc.val().to_u64());
        self.body.next = bits_of(w);
    }

    fn connect(&mut self) {
        self.body.connect();
    }

    fn hdl(&self) -> Verilog {
        concat_verilog(
            "body",
            &[
                "fpga_offset",
                "path",
                "reserved",
                "vaddr",
                "size",
                "ptype",
                "dest",
                "pdid",
                "vc",
            ],
        )
    }
}

/// `{8'h00, check, body}`: the header word.
#[derive(LogicBlock, Default)]
pub struct HeaderWordPack {
    /// Header bits \[111:0\].
    pub body: Signal<In, Bits<112>>,
    /// SECDED check bits of `body`.
    pub check: Signal<In, Bits<8>>,
    /// The header word.
    pub word: Signal<Out, Bits<128>>,
}

impl Logic for HeaderWordPack {
    fn update(&mut self) {
        let w = self.body.val().to_u128() | (self.check.val().to_u128() << 112);
        self.word.next = bits_of(w);
    }

    fn connect(&mut self) {
        self.word.connect();
    }

    fn hdl(&self) -> Verilog {
        concat_verilog("word", &["8'h00", "check", "body"])
    }
}

/// Header fields → header word with ECC.
#[derive(LogicBlock)]
pub struct HeaderPack {
    /// FPGA offset.
    pub fpga_offset: Signal<In, Bits<2>>,
    /// Path.
    pub path: Signal<In, Bits<3>>,
    /// Reserved.
    pub reserved: Signal<In, Bits<3>>,
    /// Destination virtual address.
    pub vaddr: Signal<In, Bits<42>>,
    /// Size in bytes.
    pub size: Signal<In, Bits<14>>,
    /// Packet type code.
    pub ptype: Signal<In, Bits<5>>,
    /// Destination coordinates.
    pub dest: Signal<In, Bits<22>>,
    /// Protection domain id.
    pub pdid: Signal<In, Bits<16>>,
    /// Virtual channel.
    pub vc: Signal<In, Bits<5>>,
    /// The header word.
    pub word: Signal<Out, Bits<128>>,
    body_pack: HeaderBodyPack,
    encoder: SecdedEncoder<112, 8>,
    word_pack: HeaderWordPack,
}

impl HeaderPack {
    /// The packer.
    pub fn new() -> Result<Self> {
        Ok(HeaderPack {
            fpga_offset: Default::default(),
            path: Default::default(),
            reserved: Default::default(),
            vaddr: Default::default(),
            size: Default::default(),
            ptype: Default::default(),
            dest: Default::default(),
            pdid: Default::default(),
            vc: Default::default(),
            word: Default::default(),
            body_pack: Default::default(),
            encoder: SecdedEncoder::new()?,
            word_pack: Default::default(),
        })
    }
}

impl Logic for HeaderPack {
    #[hdl_gen]
    fn update(&mut self) {
        self.body_pack.fpga_offset.next = self.fpga_offset.val();
        self.body_pack.path.next = self.path.val();
        self.body_pack.reserved.next = self.reserved.val();
        self.body_pack.vaddr.next = self.vaddr.val();
        self.body_pack.size.next = self.size.val();
        self.body_pack.ptype.next = self.ptype.val();
        self.body_pack.dest.next = self.dest.val();
        self.body_pack.pdid.next = self.pdid.val();
        self.body_pack.vc.next = self.vc.val();
        self.encoder.data.next = self.body_pack.body.val();
        self.word_pack.body.next = self.body_pack.body.val();
        self.word_pack.check.next = self.encoder.check.val();
        self.word.next = self.word_pack.word.val();
    }
}

/// Header word → corrected fields and ECC status.
#[derive(LogicBlock)]
pub struct HeaderUnpack {
    /// The header word as received.
    pub word: Signal<In, Bits<128>>,
    /// FPGA offset.
    pub fpga_offset: Signal<Out, Bits<2>>,
    /// Path.
    pub path: Signal<Out, Bits<3>>,
    /// Reserved.
    pub reserved: Signal<Out, Bits<3>>,
    /// Destination virtual address.
    pub vaddr: Signal<Out, Bits<42>>,
    /// Size in bytes.
    pub size: Signal<Out, Bits<14>>,
    /// Packet type code.
    pub ptype: Signal<Out, Bits<5>>,
    /// Destination coordinates.
    pub dest: Signal<Out, Bits<22>>,
    /// Protection domain id.
    pub pdid: Signal<Out, Bits<16>>,
    /// Virtual channel.
    pub vc: Signal<Out, Bits<5>>,
    /// ecc\[15:8\] as received (reserved, not protected).
    pub ecc_reserved: Signal<Out, Bits<8>>,
    /// One bit was flipped and is corrected.
    pub single_err: Signal<Out, bool>,
    /// Uncorrectable error: the fields are not trustworthy.
    pub double_err: Signal<Out, bool>,
    /// The (corrected) type code is a known packet type.
    pub ptype_known: Signal<Out, bool>,
    decoder: SecdedDecoder<112, 8>,
    body: Signal<Local, Bits<112>>,
    type_code: Signal<Local, Bits<5>>,
    // Offsets: 7 bits index the 128-bit word and the 112-bit body.
    off_body: Constant<Bits<7>>,
    off_check: Constant<Bits<7>>,
    off_ecc_reserved: Constant<Bits<7>>,
    off_fpga_offset: Constant<Bits<7>>,
    off_path: Constant<Bits<7>>,
    off_reserved: Constant<Bits<7>>,
    off_vaddr: Constant<Bits<7>>,
    off_size: Constant<Bits<7>>,
    off_ptype: Constant<Bits<7>>,
    off_dest: Constant<Bits<7>>,
    off_pdid: Constant<Bits<7>>,
    off_vc: Constant<Bits<7>>,
    known_code: Vec<Constant<Bits<5>>>,
    _types: usize,
}

impl HeaderUnpack {
    /// The unpacker.
    pub fn new() -> Result<Self> {
        Ok(HeaderUnpack {
            word: Default::default(),
            fpga_offset: Default::default(),
            path: Default::default(),
            reserved: Default::default(),
            vaddr: Default::default(),
            size: Default::default(),
            ptype: Default::default(),
            dest: Default::default(),
            pdid: Default::default(),
            vc: Default::default(),
            ecc_reserved: Default::default(),
            single_err: Default::default(),
            double_err: Default::default(),
            ptype_known: Default::default(),
            decoder: SecdedDecoder::new()?,
            body: Default::default(),
            type_code: Default::default(),
            off_body: Constant::new(bits(0)),
            off_check: Constant::new(bits(ECC.offset as u64)),
            off_ecc_reserved: Constant::new(bits(ECC.offset as u64 + 8)),
            off_fpga_offset: offset(&FPGA_OFFSET),
            off_path: offset(&PATH),
            off_reserved: offset(&RESERVED),
            off_vaddr: offset(&VADDR),
            off_size: offset(&SIZE),
            off_ptype: offset(&PTYPE),
            off_dest: offset(&DEST),
            off_pdid: offset(&PDID),
            off_vc: offset(&VC),
            known_code: PacketType::ALL
                .iter()
                .map(|t| Constant::new(bits(t.code() as u64)))
                .collect(),
            _types: PacketType::ALL.len(),
        })
    }
}

impl Logic for HeaderUnpack {
    #[hdl_gen]
    fn update(&mut self) {
        self.decoder.data.next = self.word.val().get_bits::<112>(self.off_body.val().index());
        self.decoder.check.next = self.word.val().get_bits::<8>(self.off_check.val().index());
        self.single_err.next = self.decoder.single_err.val();
        self.double_err.next = self.decoder.double_err.val();
        self.ecc_reserved.next = self
            .word
            .val()
            .get_bits::<8>(self.off_ecc_reserved.val().index());
        self.body.next = self.decoder.corrected.val();
        self.fpga_offset.next = self
            .body
            .val()
            .get_bits::<2>(self.off_fpga_offset.val().index());
        self.path.next = self.body.val().get_bits::<3>(self.off_path.val().index());
        self.reserved.next = self
            .body
            .val()
            .get_bits::<3>(self.off_reserved.val().index());
        self.vaddr.next = self.body.val().get_bits::<42>(self.off_vaddr.val().index());
        self.size.next = self.body.val().get_bits::<14>(self.off_size.val().index());
        self.type_code.next = self.body.val().get_bits::<5>(self.off_ptype.val().index());
        self.ptype.next = self.type_code.val();
        self.dest.next = self.body.val().get_bits::<22>(self.off_dest.val().index());
        self.pdid.next = self.body.val().get_bits::<16>(self.off_pdid.val().index());
        self.vc.next = self.body.val().get_bits::<5>(self.off_vc.val().index());
        self.ptype_known.next = false;
        for i in 0..self._types {
            if self.type_code.val() == self.known_code[i].val() {
                self.ptype_known.next = true;
            }
        }
    }
}

/// Emit [`HeaderPack`] as `exanet_header_pack`.
pub fn emit_header_pack() -> Result<Emitted> {
    emit(&mut HeaderPack::new()?, "exanet_header_pack")
}

/// Emit [`HeaderUnpack`] as `exanet_header_unpack`.
pub fn emit_header_unpack() -> Result<Emitted> {
    emit(&mut HeaderUnpack::new()?, "exanet_header_unpack")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    #[test]
    fn emits_lint_clean_verilog() {
        let p = emit_header_pack().unwrap();
        let t = p.text();
        assert!(t.contains("word = {8'h00, check, body};"), "{t}");
        assert!(
            t.contains("body = {fpga_offset, path, reserved, vaddr, size, ptype, dest, pdid, vc};")
        );
        assert_lint_clean(&p);
        let u = emit_header_unpack().unwrap();
        let top = &u.modules.last().unwrap().1;
        for (port, w) in [
            ("word", 128),
            ("vaddr", 42),
            ("dest", 22),
            ("ecc_reserved", 8),
        ] {
            assert!(top.contains(&format!("[{}:0] {port};", w - 1)), "{port}");
        }
        assert!(top.contains("vaddr = body[(off_vaddr)+:(42)];"), "{top}");
        assert_lint_clean(&u);
    }
}

/// Co-simulation top of the packet format (`exanet_packet`): every packer
/// feeds a register, and the register — xor an error mask, as a link would
/// corrupt it — feeds the matching unpacker. Checks pack and unpack
/// against the golden packing together, with 0/1/2-bit header errors and
/// corrupted footers.
///
/// Ports (prefix `h` header, `f` footer, `c` coordinates):
/// - `clock`
/// - `h_<field>` → `h_word[128]` (combinational); `h_err[128]`;
///   `hu_<field>`, `hu_ecc_reserved`, `hu_single_err`, `hu_double_err`,
///   `hu_ptype_known` = unpack(`h_word` of the previous cycle ^ `h_err`)
/// - `f_<field>` → `f_word[128]`; `f_err[128]`; `fu_<field>`, `fu_crc8`,
///   `fu_crc8_ok` = unpack(previous `f_word` ^ `f_err`)
/// - `c_<field>` → `c_coords[22]`; `c_err[22]`; `cu_<field>`
///
/// Latency: pack 0 cycles, pack → unpack 1 cycle (power-on register value 0).
#[derive(LogicBlock)]
pub struct PacketCodec {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Header fields to pack.
    pub h_fpga_offset: Signal<In, Bits<2>>,
    /// Header path.
    pub h_path: Signal<In, Bits<3>>,
    /// Header reserved.
    pub h_reserved: Signal<In, Bits<3>>,
    /// Header vaddr.
    pub h_vaddr: Signal<In, Bits<42>>,
    /// Header size.
    pub h_size: Signal<In, Bits<14>>,
    /// Header type code.
    pub h_ptype: Signal<In, Bits<5>>,
    /// Header destination.
    pub h_dest: Signal<In, Bits<22>>,
    /// Header PDID.
    pub h_pdid: Signal<In, Bits<16>>,
    /// Header VC.
    pub h_vc: Signal<In, Bits<5>>,
    /// Packed header.
    pub h_word: Signal<Out, Bits<128>>,
    /// Bits flipped in the registered header before unpacking.
    pub h_err: Signal<In, Bits<128>>,
    /// Unpacked header fields.
    pub hu_fpga_offset: Signal<Out, Bits<2>>,
    /// Unpacked path.
    pub hu_path: Signal<Out, Bits<3>>,
    /// Unpacked reserved.
    pub hu_reserved: Signal<Out, Bits<3>>,
    /// Unpacked vaddr.
    pub hu_vaddr: Signal<Out, Bits<42>>,
    /// Unpacked size.
    pub hu_size: Signal<Out, Bits<14>>,
    /// Unpacked type code.
    pub hu_ptype: Signal<Out, Bits<5>>,
    /// Unpacked destination.
    pub hu_dest: Signal<Out, Bits<22>>,
    /// Unpacked PDID.
    pub hu_pdid: Signal<Out, Bits<16>>,
    /// Unpacked VC.
    pub hu_vc: Signal<Out, Bits<5>>,
    /// Unpacked ecc\[15:8\].
    pub hu_ecc_reserved: Signal<Out, Bits<8>>,
    /// Single error corrected.
    pub hu_single_err: Signal<Out, bool>,
    /// Uncorrectable error.
    pub hu_double_err: Signal<Out, bool>,
    /// Known packet type.
    pub hu_ptype_known: Signal<Out, bool>,
    /// Footer fields to pack.
    pub f_payload_crc: Signal<In, Bits<32>>,
    /// Footer user bits.
    pub f_user: Signal<In, Bits<12>>,
    /// Footer TTL.
    pub f_ttl: Signal<In, Bits<15>>,
    /// Footer sequence number.
    pub f_seq: Signal<In, Bits<14>>,
    /// Footer notify.
    pub f_notify: Signal<In, bool>,
    /// Footer last.
    pub f_last: Signal<In, bool>,
    /// Footer first.
    pub f_first: Signal<In, bool>,
    /// Footer flags.
    pub f_flags: Signal<In, Bits<8>>,
    /// Footer source.
    pub f_src: Signal<In, Bits<22>>,
    /// Footer transaction id.
    pub f_txid: Signal<In, Bits<14>>,
    /// Packed footer.
    pub f_word: Signal<Out, Bits<128>>,
    /// Bits flipped in the registered footer before unpacking.
    pub f_err: Signal<In, Bits<128>>,
    /// Unpacked payload CRC.
    pub fu_payload_crc: Signal<Out, Bits<32>>,
    /// Unpacked CRC-8 as received.
    pub fu_crc8: Signal<Out, Bits<8>>,
    /// CRC-8 matches.
    pub fu_crc8_ok: Signal<Out, bool>,
    /// Unpacked user bits.
    pub fu_user: Signal<Out, Bits<12>>,
    /// Unpacked TTL.
    pub fu_ttl: Signal<Out, Bits<15>>,
    /// Unpacked sequence number.
    pub fu_seq: Signal<Out, Bits<14>>,
    /// Unpacked notify.
    pub fu_notify: Signal<Out, bool>,
    /// Unpacked last.
    pub fu_last: Signal<Out, bool>,
    /// Unpacked first.
    pub fu_first: Signal<Out, bool>,
    /// Unpacked flags.
    pub fu_flags: Signal<Out, Bits<8>>,
    /// Unpacked source.
    pub fu_src: Signal<Out, Bits<22>>,
    /// Unpacked transaction id.
    pub fu_txid: Signal<Out, Bits<14>>,
    /// Coordinates to pack: x.
    pub c_x: Signal<In, Bits<4>>,
    /// y.
    pub c_y: Signal<In, Bits<4>>,
    /// z.
    pub c_z: Signal<In, Bits<4>>,
    /// FPGA.
    pub c_fpga: Signal<In, Bits<2>>,
    /// Reserved.
    pub c_reserved: Signal<In, Bits<8>>,
    /// Packed coordinates.
    pub c_coords: Signal<Out, Bits<22>>,
    /// Bits flipped in the registered coordinates before unpacking.
    pub c_err: Signal<In, Bits<22>>,
    /// Unpacked x.
    pub cu_x: Signal<Out, Bits<4>>,
    /// Unpacked y.
    pub cu_y: Signal<Out, Bits<4>>,
    /// Unpacked z.
    pub cu_z: Signal<Out, Bits<4>>,
    /// Unpacked FPGA.
    pub cu_fpga: Signal<Out, Bits<2>>,
    /// Unpacked reserved.
    pub cu_reserved: Signal<Out, Bits<8>>,
    hpack: HeaderPack,
    hunpack: HeaderUnpack,
    fpack: FooterPack,
    funpack: FooterUnpack,
    cpack: CoordsPack,
    cunpack: CoordsUnpack,
    h_q: DFF<Bits<128>>,
    f_q: DFF<Bits<128>>,
    c_q: DFF<Bits<22>>,
}

impl PacketCodec {
    /// The co-simulation top.
    pub fn new() -> Result<Self> {
        Ok(PacketCodec {
            clock: Default::default(),
            h_fpga_offset: Default::default(),
            h_path: Default::default(),
            h_reserved: Default::default(),
            h_vaddr: Default::default(),
            h_size: Default::default(),
            h_ptype: Default::default(),
            h_dest: Default::default(),
            h_pdid: Default::default(),
            h_vc: Default::default(),
            h_word: Default::default(),
            h_err: Default::default(),
            hu_fpga_offset: Default::default(),
            hu_path: Default::default(),
            hu_reserved: Default::default(),
            hu_vaddr: Default::default(),
            hu_size: Default::default(),
            hu_ptype: Default::default(),
            hu_dest: Default::default(),
            hu_pdid: Default::default(),
            hu_vc: Default::default(),
            hu_ecc_reserved: Default::default(),
            hu_single_err: Default::default(),
            hu_double_err: Default::default(),
            hu_ptype_known: Default::default(),
            f_payload_crc: Default::default(),
            f_user: Default::default(),
            f_ttl: Default::default(),
            f_seq: Default::default(),
            f_notify: Default::default(),
            f_last: Default::default(),
            f_first: Default::default(),
            f_flags: Default::default(),
            f_src: Default::default(),
            f_txid: Default::default(),
            f_word: Default::default(),
            f_err: Default::default(),
            fu_payload_crc: Default::default(),
            fu_crc8: Default::default(),
            fu_crc8_ok: Default::default(),
            fu_user: Default::default(),
            fu_ttl: Default::default(),
            fu_seq: Default::default(),
            fu_notify: Default::default(),
            fu_last: Default::default(),
            fu_first: Default::default(),
            fu_flags: Default::default(),
            fu_src: Default::default(),
            fu_txid: Default::default(),
            c_x: Default::default(),
            c_y: Default::default(),
            c_z: Default::default(),
            c_fpga: Default::default(),
            c_reserved: Default::default(),
            c_coords: Default::default(),
            c_err: Default::default(),
            cu_x: Default::default(),
            cu_y: Default::default(),
            cu_z: Default::default(),
            cu_fpga: Default::default(),
            cu_reserved: Default::default(),
            hpack: HeaderPack::new()?,
            hunpack: HeaderUnpack::new()?,
            fpack: FooterPack::new()?,
            funpack: FooterUnpack::new()?,
            cpack: Default::default(),
            cunpack: Default::default(),
            h_q: Default::default(),
            f_q: Default::default(),
            c_q: Default::default(),
        })
    }
}

impl Logic for PacketCodec {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, h_q, f_q, c_q);
        // Header.
        self.hpack.fpga_offset.next = self.h_fpga_offset.val();
        self.hpack.path.next = self.h_path.val();
        self.hpack.reserved.next = self.h_reserved.val();
        self.hpack.vaddr.next = self.h_vaddr.val();
        self.hpack.size.next = self.h_size.val();
        self.hpack.ptype.next = self.h_ptype.val();
        self.hpack.dest.next = self.h_dest.val();
        self.hpack.pdid.next = self.h_pdid.val();
        self.hpack.vc.next = self.h_vc.val();
        self.h_word.next = self.hpack.word.val();
        self.h_q.d.next = self.hpack.word.val();
        self.hunpack.word.next = self.h_q.q.val() ^ self.h_err.val();
        self.hu_fpga_offset.next = self.hunpack.fpga_offset.val();
        self.hu_path.next = self.hunpack.path.val();
        self.hu_reserved.next = self.hunpack.reserved.val();
        self.hu_vaddr.next = self.hunpack.vaddr.val();
        self.hu_size.next = self.hunpack.size.val();
        self.hu_ptype.next = self.hunpack.ptype.val();
        self.hu_dest.next = self.hunpack.dest.val();
        self.hu_pdid.next = self.hunpack.pdid.val();
        self.hu_vc.next = self.hunpack.vc.val();
        self.hu_ecc_reserved.next = self.hunpack.ecc_reserved.val();
        self.hu_single_err.next = self.hunpack.single_err.val();
        self.hu_double_err.next = self.hunpack.double_err.val();
        self.hu_ptype_known.next = self.hunpack.ptype_known.val();
        // Footer.
        self.fpack.payload_crc.next = self.f_payload_crc.val();
        self.fpack.user.next = self.f_user.val();
        self.fpack.ttl.next = self.f_ttl.val();
        self.fpack.seq.next = self.f_seq.val();
        self.fpack.notify.next = self.f_notify.val();
        self.fpack.last.next = self.f_last.val();
        self.fpack.first.next = self.f_first.val();
        self.fpack.flags.next = self.f_flags.val();
        self.fpack.src.next = self.f_src.val();
        self.fpack.txid.next = self.f_txid.val();
        self.f_word.next = self.fpack.word.val();
        self.f_q.d.next = self.fpack.word.val();
        self.funpack.word.next = self.f_q.q.val() ^ self.f_err.val();
        self.fu_payload_crc.next = self.funpack.payload_crc.val();
        self.fu_crc8.next = self.funpack.crc8.val();
        self.fu_crc8_ok.next = self.funpack.crc8_ok.val();
        self.fu_user.next = self.funpack.user.val();
        self.fu_ttl.next = self.funpack.ttl.val();
        self.fu_seq.next = self.funpack.seq.val();
        self.fu_notify.next = self.funpack.notify.val();
        self.fu_last.next = self.funpack.last.val();
        self.fu_first.next = self.funpack.first.val();
        self.fu_flags.next = self.funpack.flags.val();
        self.fu_src.next = self.funpack.src.val();
        self.fu_txid.next = self.funpack.txid.val();
        // Coordinates.
        self.cpack.x.next = self.c_x.val();
        self.cpack.y.next = self.c_y.val();
        self.cpack.z.next = self.c_z.val();
        self.cpack.fpga.next = self.c_fpga.val();
        self.cpack.reserved.next = self.c_reserved.val();
        self.c_coords.next = self.cpack.coords.val();
        self.c_q.d.next = self.cpack.coords.val();
        self.cunpack.coords.next = self.c_q.q.val() ^ self.c_err.val();
        self.cu_x.next = self.cunpack.x.val();
        self.cu_y.next = self.cunpack.y.val();
        self.cu_z.next = self.cunpack.z.val();
        self.cu_fpga.next = self.cunpack.fpga.val();
        self.cu_reserved.next = self.cunpack.reserved.val();
    }
}

/// Emit [`PacketCodec`] as `exanet_packet`.
pub fn emit_packet_codec() -> Result<Emitted> {
    emit(&mut PacketCodec::new()?, "exanet_packet")
}

#[cfg(test)]
mod codec_tests {
    use super::*;
    use crate::emit::assert_lint_clean;

    #[test]
    fn codec_top_emits_lint_clean_verilog() {
        let e = emit_packet_codec().unwrap();
        let top = &e.modules.last().unwrap().1;
        for p in [
            "clock",
            "h_word",
            "h_err",
            "hu_ptype_known",
            "fu_crc8_ok",
            "cu_reserved",
        ] {
            assert!(top.contains(&format!(" {p};")), "{p}");
        }
        assert_lint_clean(&e);
    }
}
