//! Packet format: round trips over random values and the exact bit position
//! of every field (a field set to all ones, the others zero, gives exactly
//! the field's mask).

use exanet_sim::common::secded::{CodeBit, EccStatus};
use exanet_sim::packet::coords::{self, Coords};
use exanet_sim::packet::footer::{self, footer_crc8, Footer, FooterError};
use exanet_sim::packet::header::{self, header_ecc, Header, HeaderError, PacketType};
use exanet_sim::rng::Rng;

/// `(msb, lsb)` of every field as written in ARCHITECTURE.md, MSB first.
const HEADER_SPEC: [(&str, u32, u32); 10] = [
    ("ecc", 127, 112),
    ("fpga_offset", 111, 110),
    ("path", 109, 107),
    ("reserved", 106, 104),
    ("vaddr", 103, 62),
    ("size", 61, 48),
    ("ptype", 47, 43),
    ("dest", 42, 21),
    ("pdid", 20, 5),
    ("vc", 4, 0),
];
const FOOTER_SPEC: [(&str, u32, u32); 11] = [
    ("payload_crc", 127, 96),
    ("crc8", 95, 88),
    ("user", 87, 76),
    ("ttl", 75, 61),
    ("seq", 60, 47),
    ("notify", 46, 46),
    ("last", 45, 45),
    ("first", 44, 44),
    ("flags", 43, 36),
    ("src", 35, 14),
    ("txid", 13, 0),
];
const COORDS_SPEC: [(&str, u32, u32); 5] = [
    ("x", 21, 18),
    ("y", 17, 14),
    ("z", 13, 10),
    ("fpga", 9, 8),
    ("reserved", 7, 0),
];

fn mask(msb: u32, lsb: u32) -> u128 {
    let w = msb - lsb + 1;
    let ones = if w == 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    };
    ones << lsb
}

#[test]
fn field_tables_match_the_spec() {
    for (f, (n, msb, lsb)) in header::FIELDS.iter().zip(HEADER_SPEC) {
        assert_eq!((f.name, f.offset + f.width - 1, f.offset), (n, msb, lsb));
    }
    for (f, (n, msb, lsb)) in footer::FIELDS.iter().zip(FOOTER_SPEC) {
        assert_eq!((f.name, f.offset + f.width - 1, f.offset), (n, msb, lsb));
    }
    for (f, (n, msb, lsb)) in coords::FIELDS.iter().zip(COORDS_SPEC) {
        assert_eq!((f.name, f.offset + f.width - 1, f.offset), (n, msb, lsb));
    }
}

fn all_ones_coords() -> Coords {
    let mut c = Coords::new(15, 15, 15, 3).unwrap();
    c.set_reserved(0xFF).unwrap();
    c
}

#[test]
fn coords_fields_land_at_their_bits() {
    let mut c = Coords::default();
    c.set_x(15).unwrap();
    assert_eq!(c.to_bits() as u128, mask(21, 18));
    let mut c = Coords::default();
    c.set_y(15).unwrap();
    assert_eq!(c.to_bits() as u128, mask(17, 14));
    let mut c = Coords::default();
    c.set_z(15).unwrap();
    assert_eq!(c.to_bits() as u128, mask(13, 10));
    let mut c = Coords::default();
    c.set_fpga(3).unwrap();
    assert_eq!(c.to_bits() as u128, mask(9, 8));
    let mut c = Coords::default();
    c.set_reserved(0xFF).unwrap();
    assert_eq!(c.to_bits() as u128, mask(7, 0));
    assert_eq!(all_ones_coords().to_bits() as u128, mask(21, 0));
}

/// A change to one field of a header / footer.
type SetHeader = Box<dyn Fn(&mut Header)>;
type SetFooter = Box<dyn Fn(&mut Footer)>;

/// A header word without its ecc field.
fn body(h: &Header) -> u128 {
    h.to_bits() & mask(111, 0)
}

#[test]
fn header_fields_land_at_their_bits() {
    // ptype cannot be zero (no type has code 0): measure every field
    // against a base header whose own bits are subtracted.
    let base = Header::new(PacketType::RdmaWrite, Coords::default());
    let b0 = body(&base);
    assert_eq!(b0, 1u128 << 43, "RdmaWrite = code 1 at bit 43");
    let cases: [(&str, SetHeader); 8] = [
        (
            "fpga_offset",
            Box::new(|h| {
                h.set_fpga_offset(3).unwrap();
            }),
        ),
        (
            "path",
            Box::new(|h| {
                h.set_path(7).unwrap();
            }),
        ),
        (
            "reserved",
            Box::new(|h| {
                h.set_reserved(7).unwrap();
            }),
        ),
        (
            "vaddr",
            Box::new(|h| {
                h.set_vaddr((1 << 42) - 1).unwrap();
            }),
        ),
        (
            "size",
            Box::new(|h| {
                h.set_size((1 << 14) - 1).unwrap();
            }),
        ),
        (
            "dest",
            Box::new(|h| {
                h.set_dest(all_ones_coords());
            }),
        ),
        (
            "pdid",
            Box::new(|h| {
                h.set_pdid(0xFFFF).unwrap();
            }),
        ),
        (
            "vc",
            Box::new(|h| {
                h.set_vc(31).unwrap();
            }),
        ),
    ];
    for (name, set) in cases {
        let mut h = base;
        set(&mut h);
        let (_, msb, lsb) = HEADER_SPEC.iter().find(|s| s.0 == name).copied().unwrap();
        assert_eq!(body(&h) ^ b0, mask(msb, lsb), "field {name}");
    }
    // ptype: code 0x15 (MailboxNack) vs 0x01 differ in bits 2 and 4 of the field.
    let mut h = base;
    h.set_ptype(PacketType::MailboxNack);
    assert_eq!(body(&h), 0x15u128 << 43);
    // ecc: [119:112] = SECDED of the body, [127:120] zero.
    let w = h.to_bits();
    assert_eq!(w >> 112, header_ecc(w) as u128);
    assert_eq!(w >> 120, 0);
    assert_ne!(header_ecc(w), 0);
}

#[test]
fn footer_fields_land_at_their_bits() {
    let zero = Footer::default().to_bits() & !mask(95, 88);
    assert_eq!(zero, 0);
    let cases: [(&str, SetFooter); 10] = [
        (
            "payload_crc",
            Box::new(|f| {
                f.set_payload_crc(u32::MAX).unwrap();
            }),
        ),
        (
            "user",
            Box::new(|f| {
                f.set_user(0xFFF).unwrap();
            }),
        ),
        (
            "ttl",
            Box::new(|f| {
                f.set_ttl(0x7FFF).unwrap();
            }),
        ),
        (
            "seq",
            Box::new(|f| {
                f.set_seq(0x3FFF).unwrap();
            }),
        ),
        (
            "notify",
            Box::new(|f| {
                f.set_notify(true);
            }),
        ),
        (
            "last",
            Box::new(|f| {
                f.set_last(true);
            }),
        ),
        (
            "first",
            Box::new(|f| {
                f.set_first(true);
            }),
        ),
        (
            "flags",
            Box::new(|f| {
                f.set_flags(0xFF).unwrap();
            }),
        ),
        (
            "src",
            Box::new(|f| {
                f.set_src(all_ones_coords());
            }),
        ),
        (
            "txid",
            Box::new(|f| {
                f.set_txid(0x3FFF).unwrap();
            }),
        ),
    ];
    for (name, set) in cases {
        let mut f = Footer::default();
        set(&mut f);
        let w = f.to_bits();
        let (_, msb, lsb) = FOOTER_SPEC.iter().find(|s| s.0 == name).copied().unwrap();
        assert_eq!(w & !mask(95, 88), mask(msb, lsb), "field {name}");
        assert_eq!(((w >> 88) & 0xFF) as u8, footer_crc8(w), "field {name}");
    }
}

fn random_coords(rng: &mut Rng) -> Coords {
    Coords::from_bits(rng.bits(22) as u32).unwrap()
}

fn random_header(rng: &mut Rng) -> Header {
    let t = PacketType::ALL[rng.below(PacketType::ALL.len() as u64) as usize];
    let mut h = Header::new(t, random_coords(rng));
    h.set_fpga_offset(rng.bits(2) as u8)
        .unwrap()
        .set_path(rng.bits(3) as u8)
        .unwrap()
        .set_reserved(rng.bits(3) as u8)
        .unwrap()
        .set_vaddr(rng.bits(42))
        .unwrap()
        .set_size(rng.bits(14) as u16)
        .unwrap()
        .set_pdid(rng.bits(16) as u16)
        .unwrap()
        .set_vc(rng.bits(5) as u8)
        .unwrap();
    h
}

fn random_footer(rng: &mut Rng) -> Footer {
    let mut f = Footer::new(random_coords(rng));
    f.set_payload_crc(rng.bits(32) as u32)
        .unwrap()
        .set_user(rng.bits(12) as u16)
        .unwrap()
        .set_ttl(rng.bits(15) as u16)
        .unwrap()
        .set_seq(rng.bits(14) as u16)
        .unwrap()
        .set_flags(rng.bits(8) as u8)
        .unwrap()
        .set_txid(rng.bits(14) as u16)
        .unwrap();
    f.set_notify(rng.chance(0.5))
        .set_last(rng.chance(0.5))
        .set_first(rng.chance(0.5));
    f
}

#[test]
fn header_round_trips_and_corrects_single_errors() {
    let mut rng = Rng::new(11);
    for _ in 0..20_000 {
        let h = random_header(&mut rng);
        let w = h.to_bits();
        assert_eq!(Header::decode(w).unwrap(), (h, EccStatus::Clean));
        // Every protected word with a valid type decodes and re-encodes exactly.
        assert_eq!(Header::from_bits(w).unwrap().to_bits(), w);
        let bit = rng.below(120) as usize;
        let (g, st) = Header::decode(w ^ (1u128 << bit)).unwrap();
        assert_eq!(g, h);
        let want = if bit < 112 {
            CodeBit::Data(bit)
        } else {
            CodeBit::Check(bit - 112)
        };
        assert_eq!(st, EccStatus::Corrected(want));
        let a = rng.below(120) as usize;
        let b = (a + 1 + rng.below(119) as usize) % 120;
        let e = Header::decode(w ^ (1u128 << a) ^ (1u128 << b)).unwrap_err();
        assert!(
            matches!(
                e.downcast_ref::<HeaderError>(),
                Some(HeaderError::Uncorrectable { .. })
            ),
            "{e}"
        );
    }
}

#[test]
fn header_with_unknown_type_is_an_error_not_a_panic() {
    let mut rng = Rng::new(12);
    for _ in 0..2000 {
        let mut w = rng.next_u128() & mask(111, 0);
        let code = rng.bits(5) as u8;
        w = header::PTYPE.put(w, code as u64);
        w = header::ECC.put(w, header_ecc(w) as u64);
        match Header::from_bits(w) {
            Ok(h) => assert_eq!(h.ptype().code(), code),
            Err(e) => assert_eq!(
                e.downcast_ref::<HeaderError>(),
                Some(&HeaderError::UnknownType { code })
            ),
        }
    }
}

#[test]
fn footer_round_trips_and_rejects_corruption() {
    let mut rng = Rng::new(13);
    for _ in 0..20_000 {
        let f = random_footer(&mut rng);
        let w = f.to_bits();
        assert_eq!(Footer::from_bits(w).unwrap(), f);
        let bit = rng.below(96) as u32; // covered bits and the CRC-8 itself
        let e = Footer::from_bits(w ^ (1u128 << bit)).unwrap_err();
        assert!(matches!(
            e.downcast_ref::<FooterError>(),
            Some(FooterError::Crc8Mismatch { .. })
        ));
        // The payload CRC is not covered: the payload check catches it.
        let bit = 96 + rng.below(32) as u32;
        let g = Footer::from_bits(w ^ (1u128 << bit)).unwrap();
        assert_eq!(g.payload_crc(), f.payload_crc() ^ (1 << (bit - 96)));
    }
}

#[test]
fn random_words_decode_without_panicking() {
    let mut rng = Rng::new(14);
    for _ in 0..50_000 {
        let w = rng.next_u128();
        if let Ok(h) = Header::from_bits(w) {
            assert!(h.ptype().code() < 32);
        }
        if let Ok(f) = Footer::from_bits(w) {
            assert_eq!(f.to_bits(), w);
        }
        let c = (w as u32) & ((1 << 22) - 1);
        assert_eq!(Coords::from_bits(c).unwrap().to_bits(), c);
    }
}
