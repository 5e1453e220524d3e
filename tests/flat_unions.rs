//! Enums with data in flat form (`h5vec::arrow::flatten_unions`, and the
//! writers taking the form back), reading only some columns
//! (`batches_columns`), and fields of kinds or codecs this version does not
//! know (SPEC.md section 11).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, UInt32Type, UInt8Type};
use arrow_array::{
    Array, ArrayRef, DictionaryArray, RecordBatch, StringArray, StructArray, UInt8Array,
};
use arrow_schema::{DataType, Field, Fields, Schema};
use h5vec::arrow::{
    append_record_batch, batches_columns, flatten_unions, read_schema, read_vector, save_batches,
    save_record_batch,
};
use h5vec::{load_vector, H5Vector, SaveOptions};
use h5vec_tests::mem_file;

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Shape {
    Circle { r: f64 },
    Rect(f64, f64),
    Empty,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Inner {
    label: String,
    shape: Shape,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Outer {
    Plain(Shape),
    Many { shapes: Vec<Shape> },
    Nothing,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Scene {
    id: u32,
    shape: Shape,
    maybe: Option<Shape>,
    shapes: Vec<Shape>,
    named: BTreeMap<String, Shape>,
    inner: Inner,
    maybe_inner: Option<Inner>,
    outer: Outer,
}

fn shape(i: u32) -> Shape {
    match i % 3 {
        0 => Shape::Circle {
            r: f64::from(i) + 0.5,
        },
        1 => Shape::Rect(f64::from(i), -f64::from(i)),
        _ => Shape::Empty,
    }
}

fn scene(i: u32) -> Scene {
    Scene {
        id: i,
        shape: shape(i),
        maybe: (i % 4 != 1).then(|| shape(i + 1)),
        shapes: (0..i % 3).map(|k| shape(i + k)).collect(),
        named: (0..i % 2 + 1)
            .map(|k| (format!("k{k}"), shape(i * 2 + k)))
            .collect(),
        inner: Inner {
            label: format!("in{i}"),
            shape: shape(i + 2),
        },
        maybe_inner: i.is_multiple_of(2).then(|| Inner {
            label: format!("m{i}"),
            shape: shape(i + 1),
        }),
        outer: match i % 3 {
            0 => Outer::Plain(shape(i)),
            1 => Outer::Many {
                shapes: (0..2).map(|k| shape(i + k)).collect(),
            },
            _ => Outer::Nothing,
        },
    }
}

fn scenes(n: u32) -> Vec<Scene> {
    (0..n).map(scene).collect()
}

/// Fields without their metadata, at every depth.
fn strip(fs: &Fields) -> Fields {
    fs.iter()
        .map(|f| {
            let t = match f.data_type() {
                DataType::Struct(c) => DataType::Struct(strip(c)),
                t => t.clone(),
            };
            Field::new(f.name(), t, f.is_nullable())
        })
        .collect()
}

fn names(a: &StructArray) -> Vec<String> {
    a.column_names().iter().map(|s| s.to_string()).collect()
}

fn valid(a: &dyn Array) -> Vec<bool> {
    (0..a.len()).map(|i| a.is_valid(i)).collect()
}

/// The keys and values of a `variant` column.
fn variants(a: &dyn Array) -> (Vec<Option<i32>>, Vec<String>) {
    let d = a.as_dictionary::<Int32Type>();
    let values = d
        .values()
        .as_string::<i32>()
        .iter()
        .map(|v| v.unwrap().to_owned())
        .collect();
    (d.keys().iter().collect(), values)
}

const SHAPES: [&str; 3] = ["Circle", "Rect", "Empty"];

#[test]
fn flat_form_of_a_root_column_exact() {
    let f = mem_file();
    let rows = scenes(6);
    h5vec::save_vector(&f, "v", &rows).unwrap();
    let read = read_vector(&f, "v").unwrap();
    let flat = flatten_unions(&read).unwrap();
    let schema = flat.schema();
    // The batch's own metadata (the root node) is kept.
    assert_eq!(schema.metadata(), read.schema().metadata());
    let field = schema.field_with_name("shape").unwrap();
    assert!(!field.is_nullable());
    let DataType::Struct(children) = field.data_type() else {
        panic!("{}", field.data_type())
    };
    let want = Fields::from(vec![
        Field::new(
            "variant",
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
            false,
        ),
        Field::new(
            "Circle",
            DataType::Struct(vec![Field::new("r", DataType::Float64, false)].into()),
            true,
        ),
        Field::new(
            "Rect",
            DataType::Struct(
                vec![
                    Field::new("1", DataType::Float64, false),
                    Field::new("2", DataType::Float64, false),
                ]
                .into(),
            ),
            true,
        ),
    ]);
    // Names, types and nullability (metadata aside).
    assert_eq!(strip(children), strip(&want));
    // The field's metadata: the union's, plus h5vec.union = flat.
    let union_field = read.schema().field_with_name("shape").unwrap().clone();
    let mut meta = union_field.metadata().clone();
    meta.insert("h5vec.union".to_owned(), "flat".to_owned());
    assert_eq!(field.metadata(), &meta);
    assert_eq!(meta["h5vec.kind"], "union");
    assert!(meta["h5vec.schema"].contains("\"variant_names\":[\"Circle\",\"Rect\",\"Empty\"]"));
    // The variant children keep the variant records' metadata.
    assert_eq!(children[1].metadata()["h5vec.kind"], "record");

    // Values: rows 0..6 are Circle(0.5), Rect(1, -1), Empty, Circle(3.5), Rect(4, -4), Empty.
    let s = flat.column_by_name("shape").unwrap().as_struct();
    assert_eq!(names(s), ["variant", "Circle", "Rect"]);
    assert_eq!(s.null_count(), 0);
    let (keys, values) = variants(s.column(0).as_ref());
    assert_eq!(keys, [Some(0), Some(1), Some(2), Some(0), Some(1), Some(2)]);
    assert_eq!(values, SHAPES);
    let circle = s.column(1).as_struct();
    assert_eq!(valid(circle), [true, false, false, true, false, false]);
    let r = circle.column(0).as_primitive::<Float64Type>();
    assert_eq!((r.value(0), r.value(3)), (0.5, 3.5));
    let rect = s.column(2).as_struct();
    assert_eq!(valid(rect), [false, true, false, false, true, false]);
    let one = rect.column(0).as_primitive::<Float64Type>();
    let two = rect.column(1).as_primitive::<Float64Type>();
    assert_eq!(
        (one.value(1), two.value(1), one.value(4), two.value(4)),
        (1.0, -1.0, 4.0, -4.0)
    );
}

#[test]
fn flat_form_of_options_lists_maps_and_nested_unions() {
    let f = mem_file();
    let rows = scenes(8);
    h5vec::save_vector(&f, "v", &rows).unwrap();
    let flat = flatten_unions(&read_vector(&f, "v").unwrap()).unwrap();
    let schema = flat.schema();

    // Option<Shape>: nullable struct, a null row null everywhere.
    let maybe_field = schema.field_with_name("maybe").unwrap();
    assert!(maybe_field.is_nullable());
    assert_eq!(maybe_field.metadata()["h5vec.kind"], "union");
    assert!(maybe_field.metadata()["h5vec.schema"].starts_with("{\"kind\":\"nullable\""));
    let maybe = flat.column_by_name("maybe").unwrap().as_struct();
    // Rows 1 and 5 are None; the others hold shape(i + 1).
    let some = [true, false, true, true, true, false, true, true];
    assert_eq!(valid(maybe), some);
    let (keys, _) = variants(maybe.column(0).as_ref());
    let want_keys: Vec<Option<i32>> = (0..8u32)
        .map(|i| some[i as usize].then_some(((i + 1) % 3) as i32))
        .collect();
    assert_eq!(keys, want_keys);
    assert!(maybe.column(1).is_null(1) && maybe.column(2).is_null(1));

    // Vec<Shape>: a list of flat structs, the item field flagged.
    let shapes_field = schema.field_with_name("shapes").unwrap();
    let DataType::LargeList(item) = shapes_field.data_type() else {
        panic!("{}", shapes_field.data_type())
    };
    assert_eq!(item.metadata()["h5vec.union"], "flat");
    let shapes = flat.column_by_name("shapes").unwrap().as_list::<i64>();
    // Row i has i % 3 items shape(i), shape(i + 1): rows 0..8 hold
    // [], [s1], [s2, s3], [], [s4], [s5, s6], [], [s7].
    let items = shapes.values().as_struct();
    let (keys, _) = variants(items.column(0).as_ref());
    assert_eq!(keys, [1, 2, 0, 1, 2, 0, 1].map(Some));
    assert_eq!(valid(items.column(1))[..3], [false, false, true]);

    // BTreeMap<String, Shape>: the map's values are flat.
    let named_field = schema.field_with_name("named").unwrap();
    let DataType::Map(entries, _) = named_field.data_type() else {
        panic!("{}", named_field.data_type())
    };
    let DataType::Struct(kv) = entries.data_type() else {
        panic!()
    };
    assert_eq!(kv[1].metadata()["h5vec.union"], "flat");
    assert!(matches!(kv[1].data_type(), DataType::Struct(_)));
    let named = flat.column_by_name("named").unwrap().as_map();
    let (keys, _) = variants(named.values().as_struct().column(0).as_ref());
    // Row 0: {k0: shape(0)}; row 1: {k0: shape(2), k1: shape(3)}; row 2: {k0: shape(4)}.
    assert_eq!(&keys[..4], [Some(0), Some(2), Some(0), Some(1)]);

    // A struct field, and a union inside a nullable struct.
    let inner = flat.column_by_name("inner").unwrap().as_struct();
    assert_eq!(names(inner), ["label", "shape"]);
    assert_eq!(
        names(inner.column(1).as_struct()),
        ["variant", "Circle", "Rect"]
    );
    let mi = flat.column_by_name("maybe_inner").unwrap().as_struct();
    assert_eq!(valid(mi)[..3], [true, false, true]);

    // A union in a union's variant: Outer::Plain(Shape), Outer::Many { shapes }.
    let outer = flat.column_by_name("outer").unwrap().as_struct();
    assert_eq!(names(outer), ["variant", "Plain", "Many"]);
    let (keys, values) = variants(outer.column(0).as_ref());
    assert_eq!(values, ["Plain", "Many", "Nothing"]);
    assert_eq!(&keys[..3], [Some(0), Some(1), Some(2)]);
    let plain = outer.column(1).as_struct();
    assert_eq!(names(plain), ["1"]);
    let plain_shape = plain.column(0).as_struct();
    assert_eq!(names(plain_shape), ["variant", "Circle", "Rect"]);
    assert_eq!(
        plain_shape
            .column(1)
            .as_struct()
            .column(0)
            .as_primitive::<Float64Type>()
            .value(0),
        0.5
    );
    let many = outer.column(2).as_struct();
    let many_items = many.column(0).as_list::<i64>();
    assert_eq!(many_items.value_length(1), 2);
    assert!(matches!(
        many_items.values().data_type(),
        DataType::Struct(f) if f[0].name() == "variant"
    ));

    // No union is left anywhere.
    fn no_union(t: &DataType) -> bool {
        match t {
            DataType::Union(..) => false,
            DataType::Struct(f) => f.iter().all(|f| no_union(f.data_type())),
            DataType::LargeList(f) | DataType::List(f) | DataType::Map(f, _) => {
                no_union(f.data_type())
            }
            _ => true,
        }
    }
    assert!(schema.fields().iter().all(|f| no_union(f.data_type())));
}

#[test]
fn flat_form_saves_back_as_the_enum() {
    let f = mem_file();
    let rows = scenes(30);
    h5vec::save_vector(&f, "v", &rows).unwrap();
    let flat = flatten_unions(&read_vector(&f, "v").unwrap()).unwrap();
    // One batch.
    save_record_batch(&f, "one", &flat, &SaveOptions::default()).unwrap();
    assert_eq!(load_vector::<Scene>(&f, "one").unwrap(), rows);
    // A stream of slices: errors would name rows across batches.
    let parts = [flat.slice(0, 7), flat.slice(7, 13), flat.slice(20, 10)];
    let n = save_batches(
        &f,
        "stream",
        &flat.schema(),
        parts.iter().cloned().map(Ok),
        &SaveOptions::default(),
    )
    .unwrap();
    assert_eq!(n, 30);
    assert_eq!(load_vector::<Scene>(&f, "stream").unwrap(), rows);
    // The same layout as the typed save: read back, it is the same batch.
    assert_eq!(
        read_vector(&f, "stream").unwrap(),
        read_vector(&f, "v").unwrap()
    );
    // Appends take the flat form too (and the union form, in between).
    h5vec::save_vector(&f, "grow", &rows[..10]).unwrap();
    append_record_batch(&f, "grow", &flat.slice(10, 10)).unwrap();
    append_record_batch(&f, "grow", &read_vector(&f, "v").unwrap().slice(20, 5)).unwrap();
    append_record_batch(&f, "grow", &flat.slice(25, 5)).unwrap();
    assert_eq!(load_vector::<Scene>(&f, "grow").unwrap(), rows);
    // A slice of the union batch flattens to its rows.
    let part = flatten_unions(&read_vector(&f, "v").unwrap().slice(3, 4)).unwrap();
    save_record_batch(&f, "part", &part, &SaveOptions::default()).unwrap();
    assert_eq!(load_vector::<Scene>(&f, "part").unwrap(), rows[3..7]);
    // A vector of enums (not a record): the one column `value`.
    let plain: Vec<Shape> = (0..7).map(shape).collect();
    h5vec::save_vector(&f, "plain", &plain).unwrap();
    let flat = flatten_unions(&read_vector(&f, "plain").unwrap()).unwrap();
    assert_eq!(flat.schema().field(0).name(), "value");
    save_record_batch(&f, "plain2", &flat, &SaveOptions::default()).unwrap();
    assert_eq!(load_vector::<Shape>(&f, "plain2").unwrap(), plain);
    let opts: Vec<Option<Shape>> = (0..7).map(|i| (i % 3 != 2).then(|| shape(i))).collect();
    h5vec::save_vector(&f, "opts", &opts).unwrap();
    let flat = flatten_unions(&read_vector(&f, "opts").unwrap()).unwrap();
    save_record_batch(&f, "opts2", &flat, &SaveOptions::default()).unwrap();
    assert_eq!(load_vector::<Option<Shape>>(&f, "opts2").unwrap(), opts);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Item {
    id: u32,
    shape: Shape,
}

/// A batch `{id, shape}` whose shape is the flat form with `variant` given
/// as `variant` (any string or dictionary array) and the Circle and Rect
/// children of the flat form of rows `shape(0..n)`, with `meta` on the
/// shape field.
fn item_batch(variant: ArrayRef, meta: &[(&str, &str)]) -> RecordBatch {
    let f = mem_file();
    let items: Vec<Item> = (0..variant.len() as u32)
        .map(|i| Item {
            id: i,
            shape: shape(i),
        })
        .collect();
    h5vec::save_vector(&f, "v", &items).unwrap();
    let flat = flatten_unions(&read_vector(&f, "v").unwrap()).unwrap();
    let s = flat.column(1).as_struct();
    let DataType::Struct(fs) = flat.schema().field(1).data_type().clone() else {
        panic!()
    };
    let schema_json = flat.schema().field(1).metadata()["h5vec.schema"].clone();
    let mut fields: Vec<Field> = fs.iter().map(|f| f.as_ref().clone()).collect();
    fields[0] = Field::new("variant", variant.data_type().clone(), true);
    let mut cols = s.columns().to_vec();
    cols[0] = variant;
    let shape = StructArray::new(Fields::from(fields.clone()), cols, None);
    let meta: std::collections::HashMap<String, String> = meta
        .iter()
        .map(|(k, v)| {
            let v = if *v == "NODE" {
                schema_json.clone()
            } else {
                v.to_string()
            };
            (k.to_string(), v)
        })
        .collect();
    let field = Field::new("shape", DataType::Struct(fields.into()), false).with_metadata(meta);
    let schema = Schema::new(vec![Field::new("id", DataType::UInt32, false), field]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![flat.column(0).clone(), Arc::new(shape)],
    )
    .unwrap()
}

fn items(n: u32) -> Vec<Item> {
    (0..n)
        .map(|i| Item {
            id: i,
            shape: shape(i),
        })
        .collect()
}

#[test]
fn variant_names_as_any_string_or_dictionary() {
    let f = mem_file();
    let node = [("h5vec.schema", "NODE")];
    // Plain Utf8, LargeUtf8 and Utf8View names.
    let texts = ["Circle", "Rect", "Empty", "Circle"];
    let utf8: ArrayRef = Arc::new(StringArray::from(texts.to_vec()));
    let large: ArrayRef = Arc::new(arrow_array::LargeStringArray::from(texts.to_vec()));
    let view: ArrayRef = Arc::new(arrow_array::StringViewArray::from(texts.to_vec()));
    // A UInt8 dictionary whose values are in another order, with extras.
    let dict: ArrayRef = Arc::new(
        DictionaryArray::<UInt8Type>::try_new(
            UInt8Array::from(vec![2, 0, 3, 2]),
            Arc::new(StringArray::from(vec!["Rect", "Nope", "Circle", "Empty"])),
        )
        .unwrap(),
    );
    for (i, v) in [utf8, large, view, dict].into_iter().enumerate() {
        let b = item_batch(v, &node);
        let name = format!("t{i}");
        save_record_batch(&f, &name, &b, &SaveOptions::default()).unwrap();
        assert_eq!(load_vector::<Item>(&f, &name).unwrap(), items(4), "{name}");
    }
    // Marked flat and carrying the node: the same.
    let flagged = [("h5vec.schema", "NODE"), ("h5vec.union", "flat")];
    let b = item_batch(Arc::new(StringArray::from(texts.to_vec())), &flagged);
    save_record_batch(&f, "flagged", &b, &SaveOptions::default()).unwrap();
    assert_eq!(load_vector::<Item>(&f, "flagged").unwrap(), items(4));
    // Appended to a vector of the enum, the stored node says where the
    // union is even without metadata.
    h5vec::save_vector(&f, "grow", &items(2)).unwrap();
    let bare = item_batch(Arc::new(StringArray::from(texts.to_vec())), &[]);
    append_record_batch(&f, "grow", &bare).unwrap();
    let mut want = items(2);
    want.extend(items(4));
    assert_eq!(load_vector::<Item>(&f, "grow").unwrap(), want);
}

#[test]
fn flat_form_errors_name_the_field_and_row() {
    let f = mem_file();
    let node = [("h5vec.schema", "NODE")];
    // A name that is no variant: the row across batches.
    let bad = item_batch(
        Arc::new(StringArray::from(vec!["Circle", "Rect", "Square"])),
        &node,
    );
    let e = save_record_batch(&f, "a", &bad, &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$.shape[2]", "{e}");
    assert!(
        e.to_string()
            .contains("\"Square\" is not a variant of the enum (Circle, Rect, Empty)"),
        "{e}"
    );
    assert!(!f.link_exists("a"));
    let good = item_batch(
        Arc::new(StringArray::from(vec!["Circle", "Rect", "Empty"])),
        &node,
    );
    let e = save_batches(
        &f,
        "b",
        &good.schema(),
        [Ok(good.clone()), Ok(bad.slice(1, 2))],
        &SaveOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.path(), "$.shape[4]", "{e}");
    // A dictionary value that is no variant, on the row using it.
    let dict: ArrayRef = Arc::new(
        DictionaryArray::<Int32Type>::try_new(
            arrow_array::Int32Array::from(vec![0, 0, 1]),
            Arc::new(StringArray::from(vec!["Circle", "Blob"])),
        )
        .unwrap(),
    );
    let e =
        save_record_batch(&f, "c", &item_batch(dict, &node), &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$.shape[2]", "{e}");
    assert!(e.to_string().contains("\"Blob\""), "{e}");
    // The row's variant has a null struct: row 1 says Circle, whose struct
    // is null on row 1 (it is a Rect row).
    let e = save_record_batch(
        &f,
        "d",
        &item_batch(
            Arc::new(StringArray::from(vec!["Circle", "Circle", "Empty"])),
            &node,
        ),
        &SaveOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.path(), "$.shape[1]", "{e}");
    assert!(
        e.to_string()
            .contains("the row's variant is `Circle` but its `Circle` struct is null"),
        "{e}"
    );
    // Marked flat without its node.
    let e = save_record_batch(
        &f,
        "e",
        &item_batch(
            Arc::new(StringArray::from(vec!["Circle"])),
            &[("h5vec.union", "flat")],
        ),
        &SaveOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.path(), "$.shape", "{e}");
    assert!(e.to_string().contains("no schema node"), "{e}");
    // Variant names that are not strings.
    let e = save_record_batch(
        &f,
        "g",
        &item_batch(Arc::new(arrow_array::Int32Array::from(vec![0])), &node),
        &SaveOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.path(), "$.shape.variant", "{e}");
    // A null variant is a null row: an error where the field is not nullable.
    let e = save_record_batch(
        &f,
        "h",
        &item_batch(
            Arc::new(StringArray::from(vec![Some("Circle"), None])),
            &node,
        ),
        &SaveOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.path(), "$.shape[1]", "{e}");
    for name in ["a", "b", "c", "d", "e", "g", "h"] {
        assert!(!f.link_exists(name), "{name}");
    }
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
enum Clash {
    Plain(u8),
    #[allow(non_camel_case_types)]
    variant {
        x: u8,
    },
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct WithClash {
    a: u8,
    inner: Vec<Clash>,
}

#[test]
fn a_variant_named_variant_has_no_flat_form() {
    let f = mem_file();
    h5vec::save_vector(
        &f,
        "v",
        &[WithClash {
            a: 1,
            inner: vec![Clash::variant { x: 2 }],
        }],
    )
    .unwrap();
    let e = flatten_unions(&read_vector(&f, "v").unwrap()).unwrap_err();
    assert_eq!(e.path(), "$.inner[]", "{e}");
    assert!(e.to_string().contains("variant named `variant`"), "{e}");
}

// ---------------------------------------------------------------------------
// Selecting columns.

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Pos {
    x: f64,
    y: f64,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Reading {
    id: u32,
    pos: Pos,
    maybe_pos: Option<Pos>,
    note: String,
}

fn readings() -> Vec<Reading> {
    (0..5)
        .map(|i| Reading {
            id: i,
            pos: Pos {
                x: f64::from(i),
                y: -f64::from(i),
            },
            maybe_pos: i.is_multiple_of(2).then_some(Pos { x: 0.5, y: 1.5 }),
            note: format!("n{i}"),
        })
        .collect()
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Picked {
    note: String,
    maybe_pos: Option<PosY>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct PosY {
    y: f64,
}

#[test]
fn batches_columns_reads_only_the_columns_named() {
    let f = mem_file();
    h5vec::save_vector(&f, "r", &readings()).unwrap();
    let mut it = batches_columns(&f, "r", &["note", "maybe_pos.y"], Some(1..4), 2).unwrap();
    assert_eq!((it.rows(), it.remaining()), (5, 3));
    let schema = it.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["note", "maybe_pos"]);
    let DataType::Struct(picked) = schema.field(1).data_type() else {
        panic!()
    };
    assert_eq!(
        strip(picked),
        Fields::from(vec![Field::new("y", DataType::Float64, false)])
    );
    assert!(schema.field(1).is_nullable());
    let b = it.next().unwrap().unwrap();
    assert_eq!(b.num_rows(), 2);
    assert_eq!(b.column(0).as_string::<i64>().value(0), "n1");
    assert_eq!(valid(b.column(1)), [false, true]);
    assert_eq!(it.next().unwrap().unwrap().num_rows(), 1);
    assert!(it.next().is_none());
    // The metadata describe the selection: it writes back as a vector of it.
    let all: Vec<RecordBatch> = batches_columns(&f, "r", &["note", "maybe_pos.y"], None, 10)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    save_record_batch(&f, "picked", &all[0], &SaveOptions::default()).unwrap();
    let want: Vec<Picked> = readings()
        .into_iter()
        .map(|r| Picked {
            note: r.note,
            maybe_pos: r.maybe_pos.map(|p| PosY { y: p.y }),
        })
        .collect();
    assert_eq!(load_vector::<Picked>(&f, "picked").unwrap(), want);
    // A record named whole takes all its fields, whatever else is named.
    let b = batches_columns(&f, "r", &["pos.y", "pos", "id"], None, 10)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let pos = b.column(0).as_struct();
    assert_eq!(names_of(pos), ["x", "y"]);
    assert_eq!(
        b.column(1).as_primitive::<UInt32Type>().values().to_vec(),
        [0, 1, 2, 3, 4]
    );
    // Errors name what is not there.
    let e = batches_columns(&f, "r", &["pos.z"], None, 10)
        .err()
        .unwrap();
    assert_eq!(e.path(), "$.pos.z", "{e}");
    assert!(e.to_string().contains("its columns are: x, y"), "{e}");
    let e = batches_columns(&f, "r", &["nope"], None, 10).err().unwrap();
    assert!(
        e.to_string()
            .contains("its columns are: id, pos, maybe_pos, note"),
        "{e}"
    );
    let e = batches_columns(&f, "r", &["note.x"], None, 10)
        .err()
        .unwrap();
    assert_eq!(e.path(), "$.note", "{e}");
    let e = batches_columns(&f, "r", &["id"], Some(3..9), 10)
        .err()
        .unwrap();
    assert!(e.to_string().contains("9"), "{e}");
    // A vector that is not a record has one column, `value`.
    h5vec::save_vector(&f, "xs", &[1u8, 2]).unwrap();
    let b = batches_columns(&f, "xs", &["value"], None, 10)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(
        b.column(0).as_primitive::<UInt8Type>().values().to_vec(),
        [1, 2]
    );
    assert!(batches_columns(&f, "xs", &["x"], None, 10).is_err());
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct TableRow {
    a: i32,
    b: Vec<u16>,
}

#[test]
fn batches_columns_of_tables_and_vls_arrays() {
    let f = mem_file();
    let rows = [TableRow { a: 1, b: vec![7] }, TableRow { a: 2, b: vec![] }];
    h5vec::h5col::save_table(&f, "t", &rows).unwrap();
    let b = batches_columns(&f, "t", &["b"], None, 10)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(b.schema().field(0).name(), "b");
    assert_eq!(b.num_columns(), 1);
    assert_eq!(b.column(0).as_list::<i64>().value_length(0), 1);
    let e = batches_columns(&f, "t", &["c"], None, 10).err().unwrap();
    assert!(e.to_string().contains("its columns are: a, b"), "{e}");
    assert!(batches_columns(&f, "t", &["a.x"], None, 10).is_err());
    h5vec::vls::save_strings(&f, "s", &[Some("x".to_string()), None]).unwrap();
    let b = batches_columns(&f, "s", &["value"], None, 10)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(valid(b.column(0)), [true, false]);
    assert!(batches_columns(&f, "s", &["other"], None, 10).is_err());
}

fn names_of(a: &StructArray) -> Vec<String> {
    names(a)
}

// ---------------------------------------------------------------------------
// Unknown kinds and codecs do not block.

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Telemetry {
    id: u32,
    future: i64,
    inner: Later,
    items: Vec<u16>,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Later {
    x: f32,
    y: i8,
}

fn telemetry() -> Vec<Telemetry> {
    (0..4)
        .map(|i| Telemetry {
            id: i,
            future: i64::from(i) * 1000,
            inner: Later {
                x: i as f32 * 0.25,
                y: -(i as i8),
            },
            items: (0..i as u16).collect(),
        })
        .collect()
}

/// Replaces scalar string `entry` of the schema node at `node` (below
/// `v/metadata/schema`) with `value`.
fn set_entry(f: &h5vec::hdf5::File, node: &str, entry: &str, value: &str) {
    let g = f.group(&format!("v/metadata/schema/{node}")).unwrap();
    g.unlink(entry).unwrap();
    let v: h5vec::hdf5::types::VarLenUnicode = value.parse().unwrap();
    g.new_dataset::<h5vec::hdf5::types::VarLenUnicode>()
        .shape(())
        .create(entry)
        .unwrap()
        .write_scalar(&v)
        .unwrap();
}

fn future_file() -> h5vec::hdf5::File {
    let f = mem_file();
    h5vec::save_vector(&f, "v", &telemetry()).unwrap();
    // `future` (child 2): a codec from a newer version on a scalar node;
    // `inner.y` (child 3, its child 2): a kind from a newer version;
    // the items of `items` (child 4, its child 1): a codec likewise.
    set_entry(&f, "children/2", "codec", "h5vec.FutureCodec");
    set_entry(&f, "children/3/children/2", "kind", "tensor");
    set_entry(
        &f,
        "children/4/children/1",
        "codec",
        "h5vec.FutureItemCodec",
    );
    f
}

#[test]
fn unknown_codecs_and_kinds_are_listed_and_skipped() {
    let f = future_file();
    // The schema lists every field; the unknown ones are nullable Null
    // fields with their node.
    let schema = read_schema(&f, "v").unwrap();
    let future = schema.field_with_name("future").unwrap();
    assert_eq!(future.data_type(), &DataType::Null);
    assert!(future.is_nullable());
    assert_eq!(future.metadata()["h5vec.unknown"], "true");
    assert_eq!(future.metadata()["h5vec.codec"], "h5vec.FutureCodec");
    assert_eq!(future.metadata()["h5vec.kind"], "scalar");
    assert_eq!(future.metadata()["h5vec.encoded_type"], "Int64");
    assert!(future.metadata()["h5vec.schema"].contains("\"codec\":\"h5vec.FutureCodec\""));
    let DataType::Struct(inner) = schema.field_with_name("inner").unwrap().data_type() else {
        panic!()
    };
    assert_eq!(inner[0].data_type(), &DataType::Float32);
    assert_eq!(inner[1].data_type(), &DataType::Null);
    assert_eq!(inner[1].metadata()["h5vec.kind"], "tensor");
    let DataType::LargeList(item) = schema.field_with_name("items").unwrap().data_type() else {
        panic!()
    };
    assert_eq!(item.data_type(), &DataType::Null);
    assert_eq!(item.metadata()["h5vec.unknown"], "true");

    // The other columns read.
    let b = batches_columns(&f, "v", &["id", "inner.x"], None, 100)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(
        b.column(0).as_primitive::<UInt32Type>().values().to_vec(),
        [0, 1, 2, 3]
    );
    let x = b
        .column(1)
        .as_struct()
        .column(0)
        .as_primitive::<arrow_array::types::Float32Type>();
    assert_eq!(x.values().to_vec(), [0.0, 0.25, 0.5, 0.75]);

    // Reading an unknown one is an error naming it and the codec (or kind).
    let err = |cols: &[&str]| {
        batches_columns(&f, "v", cols, None, 100)
            .unwrap()
            .next()
            .unwrap()
            .unwrap_err()
    };
    let e = err(&["future"]);
    assert_eq!(e.path(), "$.future", "{e}");
    assert!(
        e.to_string().contains(
            "unknown codec h5vec.FutureCodec (kind scalar): this version of h5vec cannot read it"
        ),
        "{e}"
    );
    let e = err(&["inner"]);
    assert_eq!(e.path(), "$.inner.y", "{e}");
    assert!(
        e.to_string()
            .contains("unknown kind `tensor` (codec HDF5Vectors.IdentityCodec): this version"),
        "{e}"
    );
    let e = err(&["items"]);
    assert_eq!(e.path(), "$.items[]", "{e}");
    assert!(e.to_string().contains("h5vec.FutureItemCodec"), "{e}");
    let e = read_vector(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$.future", "{e}");

    // inspect and find_containers list it.
    let info = h5vec::inspect(&f, "v").unwrap();
    let root = info.schema.unwrap();
    assert_eq!(root.children[1].codec, "h5vec.FutureCodec");
    assert_eq!(root.children[1].field_path, "$.future");
    assert_eq!(root.children[2].children[1].kind, "tensor");
    assert!(info
        .datasets
        .iter()
        .any(|d| d.path == "/v/data/future/values" && d.field_path == "$.future"));
    let found = h5vec::find_containers(&f).unwrap();
    assert_eq!((found[0].rows, found[0].columns), (4, 4));
    assert!(found[0].problem.is_none());

    // Typed loads keep refusing, naming the field.
    let e = load_vector::<Telemetry>(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$.future", "{e}");

    // A batch holding an unknown field cannot be written back.
    let schema = read_schema(&f, "v").unwrap();
    let future = schema.field_with_name("future").unwrap().clone();
    let b = RecordBatch::try_new(
        Arc::new(Schema::new(vec![future])),
        vec![Arc::new(arrow_array::NullArray::new(2))],
    )
    .unwrap();
    let e = save_record_batch(&f, "w", &b, &SaveOptions::default()).unwrap_err();
    assert_eq!(e.path(), "$.future", "{e}");
    assert!(e.to_string().contains("cannot write it"), "{e}");
    // Nor appended to.
    let e = append_record_batch(&f, "v", &b).unwrap_err();
    assert!(e.to_string().contains("cannot write it"), "{e}");
}

#[test]
fn an_unknown_root_is_one_listed_column() {
    let f = mem_file();
    h5vec::save_vector(&f, "v", &[1.5f64, 2.5]).unwrap();
    let g = f.group("v/metadata/schema").unwrap();
    g.unlink("codec").unwrap();
    let v: h5vec::hdf5::types::VarLenUnicode = "h5vec.FutureCodec".parse().unwrap();
    g.new_dataset::<h5vec::hdf5::types::VarLenUnicode>()
        .shape(())
        .create("codec")
        .unwrap()
        .write_scalar(&v)
        .unwrap();
    let schema = read_schema(&f, "v").unwrap();
    assert_eq!(schema.field(0).name(), "value");
    assert_eq!(schema.field(0).data_type(), &DataType::Null);
    let e = read_vector(&f, "v").unwrap_err();
    assert_eq!(e.path(), "$", "{e}");
    assert!(
        e.to_string()
            .contains("unknown codec h5vec.FutureCodec (kind scalar)"),
        "{e}"
    );
    assert_eq!(h5vec::inspect(&f, "v").unwrap().rows, 2);
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Keyed {
    id: u8,
    by_key: BTreeMap<u32, String>,
    shape: Shape,
}

#[test]
fn unknown_map_keys_and_union_variants_are_listed_too() {
    let f = mem_file();
    let rows: Vec<Keyed> = (0..3)
        .map(|i| Keyed {
            id: i,
            by_key: [(u32::from(i), format!("v{i}"))].into(),
            shape: shape(u32::from(i)),
        })
        .collect();
    h5vec::save_vector(&f, "v", &rows).unwrap();
    // The map's key node (list -> entry record -> key), and the Rect
    // variant of the union (its second child).
    set_entry(
        &f,
        "children/2/children/1/children/1",
        "codec",
        "h5vec.FutureKeyCodec",
    );
    set_entry(&f, "children/3/children/2", "kind", "tensor");
    let schema = read_schema(&f, "v").unwrap();
    let by_key = schema.field_with_name("by_key").unwrap();
    assert_eq!(by_key.data_type(), &DataType::Null);
    assert_eq!(by_key.metadata()["h5vec.unknown"], "true");
    let DataType::Union(variants, _) = schema.field_with_name("shape").unwrap().data_type() else {
        panic!()
    };
    let kinds: Vec<(&str, &DataType)> = variants
        .iter()
        .map(|(_, f)| (f.name().as_str(), f.data_type()))
        .collect();
    assert_eq!(kinds[1], ("Rect", &DataType::Null));
    // `id` reads; the map errors naming it and its key's codec.
    let b = batches_columns(&f, "v", &["id"], None, 10)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(
        b.column(0).as_primitive::<UInt8Type>().values().to_vec(),
        [0, 1, 2]
    );
    let e = batches_columns(&f, "v", &["by_key"], None, 10)
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(e.path(), "$.by_key", "{e}");
    assert!(
        e.to_string()
            .contains("a map key of unknown codec h5vec.FutureKeyCodec (kind scalar)"),
        "{e}"
    );
    // The union reads until a row of the unknown variant: row 0 is a
    // Circle, row 1 a Rect.
    let shapes = batches_columns(&f, "v", &["shape"], Some(0..1), 10)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(shapes.column(0).as_union().type_ids().to_vec(), [0]);
    let e = batches_columns(&f, "v", &["shape"], Some(1..2), 10)
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(e.path(), "$.shape.Rect", "{e}");
    assert!(e.to_string().contains("unknown kind `tensor`"), "{e}");
}

#[derive(H5Vector, Debug, Clone, Copy, PartialEq)]
#[repr(u8)]
enum Level {
    Low,
    High,
}

#[derive(H5Vector, Debug, Clone, PartialEq)]
struct Optional {
    level: Option<Level>,
    shape: Option<Shape>,
}

#[test]
fn all_null_dictionaries_with_no_values_write() {
    // Every row None: dictionaries without values (what a writer that
    // builds them from the rows gives) are no panic, and load as None.
    let f = mem_file();
    h5vec::save_vector(
        &f,
        "v",
        &[Optional {
            level: Some(Level::High),
            shape: Some(Shape::Empty),
        }],
    )
    .unwrap();
    let flat = flatten_unions(&read_vector(&f, "v").unwrap()).unwrap();
    let empty = || -> ArrayRef {
        Arc::new(
            DictionaryArray::<Int32Type>::try_new(
                arrow_array::Int32Array::from(vec![None, None]),
                Arc::new(StringArray::from(Vec::<&str>::new())),
            )
            .unwrap(),
        )
    };
    let s = flat.column(1).as_struct();
    let DataType::Struct(fs) = flat.schema().field(1).data_type().clone() else {
        panic!()
    };
    let mut cols: Vec<ArrayRef> = vec![empty()];
    cols.extend(
        s.columns()[1..]
            .iter()
            .map(|c| arrow_array::new_null_array(c.data_type(), 2)),
    );
    let shape = StructArray::new(fs, cols, Some(vec![false, false].into()));
    let b = RecordBatch::try_new(flat.schema(), vec![empty(), Arc::new(shape)]).unwrap();
    save_record_batch(&f, "w", &b, &SaveOptions::default()).unwrap();
    assert_eq!(
        load_vector::<Optional>(&f, "w").unwrap(),
        vec![
            Optional {
                level: None,
                shape: None
            };
            2
        ]
    );
}
