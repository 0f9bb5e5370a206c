"""File every order of the orders table as a post: one submission per row, per iteration.

Run it:  northstar run examples/programs/file_orders.py --base-url URL --repeat 3
"""

from __future__ import annotations

from order_titles import post_title

from northstar.sdk import Session

PROGRAM = {
    "name": "file-orders",
    "version": 1,
    "description": "Read the orders table and publish one post per order.",
    "tabs": {"site": {"start": "{{ base_url }}/orders"}},
    "outputs": ["filed"],
    "done_when": [
        {"tab": "site", "url": "**/posts?created=*"},
        {"tab": "site", "visible": {"role": "status"}},
    ],
}


async def main(nx: Session) -> None:
    site = nx.tab("site")
    page = await site.observe()
    orders = page["tables"][0]["rows"]
    for order, customer in orders:
        await site.goto("/posts/new")
        await site.fill({"label": "Title"}, post_title(order, customer, nx.iteration))
        await site.click(
            {"role": "button", "name": "Publish"},
            submit=True,
            expect=[{"visible": {"role": "status"}}],
        )
    await nx.output("filed", len(orders))
    await nx.complete({"filed": len(orders)})
