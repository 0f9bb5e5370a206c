import asyncio
import re
from playwright.async_api import Playwright, async_playwright, expect


async def run(playwright: Playwright) -> None:
    browser = await playwright.chromium.launch(headless=False)
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto("http://127.0.0.1:46683/login")
    await page.locator("html").click()
    await page.get_by_text("Sign in Username Password").press("Tab")
    await page.get_by_role("textbox", name="Username").fill("demo")
    await page.get_by_role("textbox", name="Username").press("Tab")
    await page.get_by_role("textbox", name="Password").fill("demo-password")
    await page.get_by_role("textbox", name="Password").press("Enter")
    await page.get_by_text("Account Signed in as demo").press("ControlOrMeta+l")
    await page.locator("html").click()
    await page.get_by_text("Contact form Name Email").press("Tab")
    await page.get_by_role("textbox", name="Name").fill("Grace Hopper")
    await page.get_by_role("textbox", name="Name").press("Tab")
    await page.get_by_role("textbox", name="Email").fill("grace@example.com")
    await page.get_by_role("textbox", name="Email").press("Tab")
    await page.get_by_role("textbox", name="Message").fill("Recorded for real")
    await page.get_by_role("textbox", name="Message").press("Tab")
    await page.get_by_label("Topic").press("Tab")
    await page.get_by_role("checkbox", name="Subscribe to newsletter").press("Tab")
    await page.get_by_role("checkbox", name="Agree to terms").press("Tab")
    await page.get_by_role("radio", name="Low").press("Tab")
    await page.get_by_role("button", name="Attachment").press("Tab")
    await page.get_by_role("button", name="Send").press("Enter")

    # ---------------------
    await context.close()
    await browser.close()


async def main() -> None:
    async with async_playwright() as playwright:
        await run(playwright)


asyncio.run(main())
