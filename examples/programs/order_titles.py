"""A local module of the example program: part of its definition hash."""


def post_title(order: str, customer: str, iteration: int) -> str:
    return f"{order} for {customer} #{iteration}"
