//! Witnesses: one test per planted bug of `plants.yaml`, each passing on the original code and
//! failing on its plant. `revcal calibrate` runs them to prove every plant is a real bug (a
//! plant whose witness does not fail is equivalent and excluded). The reviewer under test runs
//! the unit tests in src/lib.rs, not these.

use revcal_demo_shop::*;

#[test]
fn line_total_is_a_product() {
    assert_eq!(line_total(3, 7), 21);
}

#[test]
fn order_total_keeps_earlier_lines() {
    assert_eq!(order_total(&[(1, 1), (2, 1)]), 3);
}

#[test]
fn discount_starts_at_exactly_one_hundred() {
    assert_eq!(discounted(10_000), 9_000);
}

#[test]
fn discount_is_ten_percent() {
    assert_eq!(discounted(10_000), 9_000);
}

#[test]
fn the_whole_stock_can_be_taken() {
    assert_eq!(take(3, 3), Some(0));
}

#[test]
fn cheapest_is_the_minimum() {
    assert_eq!(cheapest(&[2, 1]), Some(1));
}

#[test]
fn exact_pages_do_not_round_up() {
    assert_eq!(pages(10, 5), 2);
}

#[test]
fn long_coupons_are_refused() {
    assert!(!valid_coupon("SAVE20245"));
}
