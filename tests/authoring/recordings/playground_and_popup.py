import asyncio
import re
from playwright.async_api import Playwright, async_playwright, expect


async def run(playwright: Playwright) -> None:
    browser = await playwright.chromium.launch(headless=False)
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto("http://127.0.0.1:8000/codegen")
    await page.get_by_placeholder("Search drafts").click()
    await page.get_by_placeholder("Search drafts").fill("quarterly")
    await page.get_by_placeholder("Search drafts").press("Enter")
    await expect(page.get_by_role("status")).to_have_text("Searching for quarterly")
    await page.get_by_test_id("double-me").dblclick()
    await expect(page.get_by_role("status")).to_have_text("Double-clicked")
    await page.get_by_title("Help text").hover()
    await expect(page.get_by_text("Hover help shown")).to_be_visible()
    await expect(page.get_by_alt_text("Northstar logo")).to_be_visible()
    await page.get_by_role("listitem").filter(has_text="Draft B").get_by_role("button", name="Open").click()
    await expect(page.get_by_role("list", name="Drafts")).to_contain_text("Draft B")
    await page.locator("#notify").check()
    await expect(page.locator("#notify")).to_be_checked()
    await page.get_by_label("Note").fill("remember the milk")
    await expect(page.get_by_label("Note")).to_have_value("remember the milk")
    await page.keyboard.press("Tab")
    await expect(page).to_have_title("Recorder playground")
    await page.goto("http://127.0.0.1:8000/popup/opener")
    async with page.expect_popup() as page1_info:
        await page.get_by_role("link", name="Open chooser").click()
    page1 = await page1_info.value
    await expect(page1).to_have_url("http://127.0.0.1:8000/popup/child")
    await page1.get_by_label("Colour").select_option("green")
    await page1.get_by_role("button", name="Apply").click()
    await expect(page1.get_by_role("status")).to_have_text("Applied")
    await expect(page.get_by_role("status")).to_have_text("Chosen colour: Green")
    await page1.close()

    # ---------------------
    await context.close()
    await browser.close()


async def main() -> None:
    async with async_playwright() as playwright:
        await run(playwright)


asyncio.run(main())
