//! Co-simulation bench of the packet format (`exanet_packet`, see
//! `exanet_hdl::packet::header::PacketCodec`): header, footer and
//! coordinate pack/unpack RTL against `exanet_sim::packet`.
//!
//! Each cycle drives random fields into the three packers (header types: a
//! known code 85 % of the time, any 5-bit code otherwise) and compares the
//! packed words with `Header::to_bits` / `Footer::to_bits` /
//! `Coords::to_bits`. The words are registered and come back one cycle
//! later through the unpackers, xor an error mask: header 0 (40 %), 1
//! (35 %), 2 (20 %) or 3 (5 %) flipped bits anywhere in the 128; footer 0
//! (60 %) or 1..=3 (40 %); coordinates a random mask 30 % of the time. The
//! unpacked fields and flags are compared with `Header::decode` /
//! `Footer::from_bits` / `Coords::from_bits` (and, where those reject the
//! word, with the field table and SECDED/CRC-8 functions they are built
//! from). Every output, every cycle.
//!
//! The format has no parameters, so the matrix is one point.

use super::BlockInfo;
use crate::cosim::{cmp, Bench, Mismatch};
use crate::verilator::{Port, Sim};
use anyhow::Result;
use exanet_hdl::emit::Emitted;
use exanet_hdl::packet::header::emit_packet_codec;
use exanet_sim::common::secded::{EccStatus, SecdedCode, SecdedParams};
use exanet_sim::packet::coords::Coords;
use exanet_sim::packet::footer::{self, footer_crc8, Footer};
use exanet_sim::packet::header::{self, header_ecc, Header, PacketType};
use exanet_sim::rng::Rng;
use serde::{Deserialize, Serialize};

/// Registry entry for `exanet cosim packet`.
pub fn info() -> BlockInfo {
    BlockInfo {
        name: "packet",
        about: "header/footer/coordinate pack and unpack (SECDED, CRC-8)",
        matrix,
        point,
    }
}

fn matrix() -> Vec<Box<dyn Bench>> {
    vec![Box::new(PacketBench::new())]
}

/// The format's parameters: none (its widths are fixed by the packet format).
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PacketPoint {}

/// The format has no parameters: only the empty point.
fn point(text: &str) -> Result<Box<dyn Bench>> {
    let PacketPoint {} = exanet_sim::point::parse(text)?;
    Ok(Box::new(PacketBench::new()))
}

/// A deliberately wrong golden model, to show the bench catches a mismatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketFault {
    /// The golden header packing swaps `path` and `reserved` (both 3 bits).
    SwapPathReserved,
    /// The golden footer unpacking never reports a CRC-8 error.
    IgnoreCrc8,
}

/// Cases reached; the test asserts each was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCoverage {
    /// Headers unpacked clean.
    pub header_clean: u64,
    /// Headers with a corrected single error.
    pub header_single: u64,
    /// Headers with an uncorrectable error.
    pub header_double: u64,
    /// Unpacked headers with an unknown type code.
    pub header_unknown_type: u64,
    /// Footers whose CRC-8 failed.
    pub footer_bad: u64,
}

macro_rules! ports {
    ($($name:ident: $w:expr),* $(,)?) => {
        #[derive(Clone)]
        struct Ports { $($name: Port,)* }
        fn bind_ports(sim: &Sim) -> Result<Ports> {
            Ok(Ports { $($name: sim.port_w(stringify!($name), $w)?,)* })
        }
    };
}

ports! {
    h_fpga_offset: 2, h_path: 3, h_reserved: 3, h_vaddr: 42, h_size: 14, h_ptype: 5,
    h_dest: 22, h_pdid: 16, h_vc: 5, h_word: 128, h_err: 128,
    hu_fpga_offset: 2, hu_path: 3, hu_reserved: 3, hu_vaddr: 42, hu_size: 14, hu_ptype: 5,
    hu_dest: 22, hu_pdid: 16, hu_vc: 5, hu_ecc_reserved: 8, hu_single_err: 1,
    hu_double_err: 1, hu_ptype_known: 1,
    f_payload_crc: 32, f_user: 12, f_ttl: 15, f_seq: 14, f_notify: 1, f_last: 1, f_first: 1,
    f_flags: 8, f_src: 22, f_txid: 14, f_word: 128, f_err: 128,
    fu_payload_crc: 32, fu_crc8: 8, fu_crc8_ok: 1, fu_user: 12, fu_ttl: 15, fu_seq: 14,
    fu_notify: 1, fu_last: 1, fu_first: 1, fu_flags: 8, fu_src: 22, fu_txid: 14,
    c_x: 4, c_y: 4, c_z: 4, c_fpga: 2, c_reserved: 8, c_coords: 22, c_err: 22,
    cu_x: 4, cu_y: 4, cu_z: 4, cu_fpga: 2, cu_reserved: 8,
}

/// Header fields as raw values (the type code may be unknown).
#[derive(Clone, Copy, Debug, Default)]
struct RawHeader {
    fpga_offset: u64,
    path: u64,
    reserved: u64,
    vaddr: u64,
    size: u64,
    ptype: u64,
    dest: u64,
    pdid: u64,
    vc: u64,
}

/// Expected unpacked header.
#[derive(Clone, Copy, Debug, Default)]
struct HeaderOut {
    fields: RawHeader,
    ecc_reserved: u64,
    single: bool,
    double: bool,
    known: bool,
}

/// The `packet` bench.
pub struct PacketBench {
    code: SecdedCode,
    fault: Option<PacketFault>,
    ports: Option<Ports>,
    // Registered words (power-on 0) and this cycle's inputs/expectations.
    h_q: u128,
    f_q: u128,
    c_q: u32,
    h_word: u128,
    f_word: u128,
    c_word: u32,
    h_err: u128,
    f_err: u128,
    c_err: u32,
    cov: PacketCoverage,
}

impl Default for PacketBench {
    fn default() -> Self {
        Self::new()
    }
}

impl PacketBench {
    /// The bench.
    pub fn new() -> Self {
        Self::with_fault(None)
    }

    /// A bench whose golden model is wrong in the way `fault` says.
    pub fn with_fault(fault: Option<PacketFault>) -> Self {
        PacketBench {
            code: SecdedCode::new(&SecdedParams { data_bits: 112 }).expect("112 is valid"),
            fault,
            ports: None,
            h_q: 0,
            f_q: 0,
            c_q: 0,
            h_word: 0,
            f_word: 0,
            c_word: 0,
            h_err: 0,
            f_err: 0,
            c_err: 0,
            cov: PacketCoverage::default(),
        }
    }

    /// Cases reached since the last [`Bench::reset`].
    pub fn coverage(&self) -> PacketCoverage {
        self.cov
    }

    /// The golden header word for raw fields: `Header::to_bits` for a known
    /// type, the same field table and ECC otherwise.
    fn pack_header(&self, f: &RawHeader) -> u128 {
        let (path, reserved) = match self.fault {
            Some(PacketFault::SwapPathReserved) => (f.reserved, f.path),
            _ => (f.path, f.reserved),
        };
        if let Ok(t) = PacketType::from_code(f.ptype as u8) {
            let mut h = Header::new(t, Coords::from_bits(f.dest as u32).expect("22 bits"));
            let ok = h
                .set_fpga_offset(f.fpga_offset as u8)
                .and_then(|h| h.set_path(path as u8))
                .and_then(|h| h.set_reserved(reserved as u8))
                .and_then(|h| h.set_vaddr(f.vaddr))
                .and_then(|h| h.set_size(f.size as u16))
                .and_then(|h| h.set_pdid(f.pdid as u16))
                .and_then(|h| h.set_vc(f.vc as u8))
                .is_ok();
            assert!(ok, "bench drew an out-of-range header field: {f:?}");
            return h.to_bits();
        }
        let mut w = 0u128;
        for (field, v) in [
            (header::FPGA_OFFSET, f.fpga_offset),
            (header::PATH, path),
            (header::RESERVED, reserved),
            (header::VADDR, f.vaddr),
            (header::SIZE, f.size),
            (header::PTYPE, f.ptype),
            (header::DEST, f.dest),
            (header::PDID, f.pdid),
            (header::VC, f.vc),
        ] {
            w = field.put(w, v);
        }
        header::ECC.put(w, header_ecc(w) as u64)
    }

    /// The golden unpacking of a received header word: `Header::decode`
    /// where it accepts the word; where it would reject it (uncorrectable,
    /// or unknown type), the SECDED decoder and field table it is built
    /// from, which is what the RTL shows. Checked first so the hot loop
    /// never builds an error (no allocation per cycle).
    fn unpack_header(&self, w: u128) -> HeaderOut {
        let ecc_reserved = (header::ECC.get(w) >> 8) & 0xFF;
        let body = w & ((1u128 << 112) - 1);
        let d = self.code.decode(body, (header::ECC.get(w) & 0xFF) as u16);
        let b = d.data;
        let ptype = header::PTYPE.get(b);
        let known = PacketType::ALL.iter().any(|t| t.code() as u64 == ptype);
        if known && !d.double() {
            let (h, st) = Header::decode(w).expect("decodable: checked above");
            return HeaderOut {
                fields: RawHeader {
                    fpga_offset: h.fpga_offset() as u64,
                    path: h.path() as u64,
                    reserved: h.reserved() as u64,
                    vaddr: h.vaddr(),
                    size: h.size() as u64,
                    ptype: h.ptype().code() as u64,
                    dest: h.dest().to_bits() as u64,
                    pdid: h.pdid() as u64,
                    vc: h.vc() as u64,
                },
                ecc_reserved,
                single: st != EccStatus::Clean,
                double: false,
                known: true,
            };
        }
        HeaderOut {
            fields: RawHeader {
                fpga_offset: header::FPGA_OFFSET.get(b),
                path: header::PATH.get(b),
                reserved: header::RESERVED.get(b),
                vaddr: header::VADDR.get(b),
                size: header::SIZE.get(b),
                ptype,
                dest: header::DEST.get(b),
                pdid: header::PDID.get(b),
                vc: header::VC.get(b),
            },
            ecc_reserved,
            single: d.single(),
            double: d.double(),
            known,
        }
    }
}

fn flips(rng: &mut Rng, n: u32, width: u32) -> u128 {
    let mut m = 0u128;
    while m.count_ones() < n {
        m |= 1u128 << rng.below(width as u64);
    }
    m
}

impl Bench for PacketBench {
    fn block(&self) -> &str {
        "packet"
    }

    fn point(&self) -> String {
        String::new()
    }

    fn emit(&self) -> Result<Emitted> {
        emit_packet_codec()
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        self.ports = Some(bind_ports(sim)?);
        Ok(())
    }

    fn reset(&mut self) {
        let ports = self.ports.take();
        *self = Self::with_fault(self.fault);
        self.ports = ports;
    }

    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        let p = self.ports.as_ref().expect("bind before drive");
        // Header.
        let ptype = if rng.chance(0.85) {
            PacketType::ALL[rng.below(PacketType::ALL.len() as u64) as usize].code() as u64
        } else {
            rng.bits(5)
        };
        let h = RawHeader {
            fpga_offset: rng.bits(2),
            path: rng.bits(3),
            reserved: rng.bits(3),
            vaddr: rng.bits(42),
            size: rng.bits(14),
            ptype,
            dest: rng.bits(22),
            pdid: rng.bits(16),
            vc: rng.bits(5),
        };
        for (port, v) in [
            (&p.h_fpga_offset, h.fpga_offset),
            (&p.h_path, h.path),
            (&p.h_reserved, h.reserved),
            (&p.h_vaddr, h.vaddr),
            (&p.h_size, h.size),
            (&p.h_ptype, h.ptype),
            (&p.h_dest, h.dest),
            (&p.h_pdid, h.pdid),
            (&p.h_vc, h.vc),
        ] {
            port.set(v);
        }
        self.h_word = self.pack_header(&h);
        let r = rng.below(100);
        let n = if r < 40 {
            0
        } else if r < 75 {
            1
        } else if r < 95 {
            2
        } else {
            3
        };
        self.h_err = flips(rng, n, 128);
        p.h_err.set_u128(self.h_err);
        // Footer.
        let mut f = Footer::new(Coords::from_bits(rng.bits(22) as u32).expect("22 bits"));
        let vals = [
            rng.bits(32),
            rng.bits(12),
            rng.bits(15),
            rng.bits(14),
            rng.bits(8),
            rng.bits(14),
        ];
        let ok = f
            .set_payload_crc(vals[0] as u32)
            .and_then(|f| f.set_user(vals[1] as u16))
            .and_then(|f| f.set_ttl(vals[2] as u16))
            .and_then(|f| f.set_seq(vals[3] as u16))
            .and_then(|f| f.set_flags(vals[4] as u8))
            .and_then(|f| f.set_txid(vals[5] as u16))
            .is_ok();
        assert!(ok, "bench drew an out-of-range footer field");
        f.set_notify(rng.chance(0.5))
            .set_last(rng.chance(0.5))
            .set_first(rng.chance(0.5));
        for (port, v) in [
            (&p.f_payload_crc, f.payload_crc() as u64),
            (&p.f_user, f.user() as u64),
            (&p.f_ttl, f.ttl() as u64),
            (&p.f_seq, f.seq() as u64),
            (&p.f_notify, f.notify() as u64),
            (&p.f_last, f.last() as u64),
            (&p.f_first, f.first() as u64),
            (&p.f_flags, f.flags() as u64),
            (&p.f_src, f.src().to_bits() as u64),
            (&p.f_txid, f.txid() as u64),
        ] {
            port.set(v);
        }
        self.f_word = f.to_bits();
        self.f_err = if rng.chance(0.6) {
            0
        } else {
            let n = 1 + rng.below(3) as u32;
            flips(rng, n, 128)
        };
        p.f_err.set_u128(self.f_err);
        // Coordinates.
        let c = Coords::from_bits(rng.bits(22) as u32).expect("22 bits");
        for (port, v) in [
            (&p.c_x, c.x()),
            (&p.c_y, c.y()),
            (&p.c_z, c.z()),
            (&p.c_fpga, c.fpga()),
            (&p.c_reserved, c.reserved()),
        ] {
            port.set(v as u64);
        }
        self.c_word = c.to_bits();
        self.c_err = if rng.chance(0.3) {
            rng.bits(22) as u32
        } else {
            0
        };
        p.c_err.set(self.c_err as u64);
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        let p = self.ports.as_ref().expect("bind before check");
        // Packed words (combinational).
        let m = cmp(cycle, "h_word", self.h_word, p.h_word.get_u128())
            .or_else(|| cmp(cycle, "f_word", self.f_word, p.f_word.get_u128()))
            .or_else(|| cmp(cycle, "c_coords", self.c_word as u64, p.c_coords.get()));
        if m.is_some() {
            return m;
        }
        // Header unpack of last cycle's word.
        let hu = self.unpack_header(self.h_q ^ self.h_err);
        let c = &mut self.cov;
        c.header_clean += (!hu.single && !hu.double) as u64;
        c.header_single += hu.single as u64;
        c.header_double += hu.double as u64;
        c.header_unknown_type += !hu.known as u64;
        let f = &hu.fields;
        for (name, want, port) in [
            ("hu_fpga_offset", f.fpga_offset, &p.hu_fpga_offset),
            ("hu_path", f.path, &p.hu_path),
            ("hu_reserved", f.reserved, &p.hu_reserved),
            ("hu_vaddr", f.vaddr, &p.hu_vaddr),
            ("hu_size", f.size, &p.hu_size),
            ("hu_ptype", f.ptype, &p.hu_ptype),
            ("hu_dest", f.dest, &p.hu_dest),
            ("hu_pdid", f.pdid, &p.hu_pdid),
            ("hu_vc", f.vc, &p.hu_vc),
            ("hu_ecc_reserved", hu.ecc_reserved, &p.hu_ecc_reserved),
            ("hu_single_err", hu.single as u64, &p.hu_single_err),
            ("hu_double_err", hu.double as u64, &p.hu_double_err),
            ("hu_ptype_known", hu.known as u64, &p.hu_ptype_known),
        ] {
            if let Some(m) = cmp(cycle, name, want, port.get()) {
                return Some(m);
            }
        }
        // Footer unpack.
        let fw = self.f_q ^ self.f_err;
        let crc8 = footer::CRC8.get(fw);
        let ok = footer_crc8(fw) as u64 == crc8 || self.fault == Some(PacketFault::IgnoreCrc8);
        self.cov.footer_bad += !ok as u64;
        let crc_ok = footer_crc8(fw) as u64 == crc8;
        let fields = match crc_ok {
            true => {
                let g = Footer::from_bits(fw).expect("CRC-8 checked above");
                [
                    g.payload_crc() as u64,
                    g.user() as u64,
                    g.ttl() as u64,
                    g.seq() as u64,
                    g.notify() as u64,
                    g.last() as u64,
                    g.first() as u64,
                    g.flags() as u64,
                    g.src().to_bits() as u64,
                    g.txid() as u64,
                ]
            }
            false => [
                footer::PAYLOAD_CRC,
                footer::USER,
                footer::TTL,
                footer::SEQ,
                footer::NOTIFY,
                footer::LAST,
                footer::FIRST,
                footer::FLAGS,
                footer::SRC,
                footer::TXID,
            ]
            .map(|fl| fl.get(fw)),
        };
        let fports = [
            ("fu_payload_crc", &p.fu_payload_crc),
            ("fu_user", &p.fu_user),
            ("fu_ttl", &p.fu_ttl),
            ("fu_seq", &p.fu_seq),
            ("fu_notify", &p.fu_notify),
            ("fu_last", &p.fu_last),
            ("fu_first", &p.fu_first),
            ("fu_flags", &p.fu_flags),
            ("fu_src", &p.fu_src),
            ("fu_txid", &p.fu_txid),
        ];
        for ((name, port), want) in fports.into_iter().zip(fields) {
            if let Some(m) = cmp(cycle, name, want, port.get()) {
                return Some(m);
            }
        }
        let m = cmp(cycle, "fu_crc8", crc8, p.fu_crc8.get())
            .or_else(|| cmp(cycle, "fu_crc8_ok", ok as u64, p.fu_crc8_ok.get()));
        if m.is_some() {
            return m;
        }
        // Coordinates unpack.
        let cu = Coords::from_bits(self.c_q ^ self.c_err).expect("22 bits");
        for (name, want, port) in [
            ("cu_x", cu.x(), &p.cu_x),
            ("cu_y", cu.y(), &p.cu_y),
            ("cu_z", cu.z(), &p.cu_z),
            ("cu_fpga", cu.fpga(), &p.cu_fpga),
            ("cu_reserved", cu.reserved(), &p.cu_reserved),
        ] {
            if let Some(m) = cmp(cycle, name, want as u64, port.get()) {
                return Some(m);
            }
        }
        None
    }

    fn advance(&mut self) {
        self.h_q = self.h_word;
        self.f_q = self.f_word;
        self.c_q = self.c_word;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cosim::{run, skip_without_verilator, test_options};

    /// Seed of every run.
    const SEED: u64 = 0xFAC7;

    #[test]
    fn point_takes_no_keys() {
        assert_eq!(point("").unwrap().point(), "");
        let e = point("width=3").err().unwrap().to_string();
        assert!(e.contains("width"), "{e}");
        assert_eq!(matrix().len(), 1);
    }

    #[test]
    fn rtl_matches_the_golden_packing_and_reaches_every_case() {
        if skip_without_verilator() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let mut b = PacketBench::new();
        let r = run(&mut b, &test_options(200_000, SEED, tmp.path())).unwrap();
        println!("{}", r.summary());
        assert_eq!(r.mismatches, 0, "{:?}", r.first);
        let c = b.coverage();
        println!("{c:?}");
        for (what, n) in [
            ("clean headers", c.header_clean),
            ("corrected headers", c.header_single),
            ("uncorrectable headers", c.header_double),
            ("unknown types", c.header_unknown_type),
            ("bad footers", c.footer_bad),
        ] {
            assert!(n >= 1000, "only {n} {what}");
        }
    }

    #[test]
    fn a_wrong_golden_model_is_caught_on_the_right_port() {
        if skip_without_verilator() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        for (fault, port) in [
            (PacketFault::SwapPathReserved, "h_word"),
            (PacketFault::IgnoreCrc8, "fu_crc8_ok"),
        ] {
            let mut b = PacketBench::with_fault(Some(fault));
            let r = run(&mut b, &test_options(10_000, SEED, tmp.path())).unwrap();
            let m = r.first.expect("a wrong golden model must mismatch");
            assert_eq!(m.port, port, "{fault:?}: {m}");
            assert!(m.cycle < 100, "{fault:?}: {m}");
        }
    }
}
